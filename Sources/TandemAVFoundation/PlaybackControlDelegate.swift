import Foundation
import TandemClock

// AVFoundation's delegate protocol for a program's own player, with its four command classes,
// over Tandem's one-method `PlaybackCoordinatorDelegate`: a player written for Apple's
// `AVDelegatingPlaybackCoordinator` compiles with its import changed, and is issued the same
// commands as a Tandem delegate is, converted to Apple's types (`CMTime`, `Float`, `Date`).

/// AVFoundation's `AVPlaybackCoordinatorPlaybackControlDelegate`: the player an
/// `AVDelegatingPlaybackCoordinator` drives, issued one command at a time from the coordinator's
/// executor, each with a handler to call once the player has carried it out (or found that it
/// expects another item, when it calls the handler without applying it).
public protocol AVPlaybackCoordinatorPlaybackControlDelegate: AnyObject {
    /// Play from `playCommand.itemTime` at `playCommand.hostClockTime`, at `playCommand.rate`.
    func playbackCoordinator(_ coordinator: AVDelegatingPlaybackCoordinator, didIssue playCommand: AVDelegatingPlaybackCoordinatorPlayCommand,
                             completionHandler: @escaping () -> Void)
    /// Pause, getting ready to play again if `pauseCommand.shouldBufferInAnticipationOfPlayback`.
    func playbackCoordinator(_ coordinator: AVDelegatingPlaybackCoordinator, didIssue pauseCommand: AVDelegatingPlaybackCoordinatorPauseCommand,
                             completionHandler: @escaping () -> Void)
    /// Move to `seekCommand.itemTime`, by `seekCommand.completionDueDate`.
    func playbackCoordinator(_ coordinator: AVDelegatingPlaybackCoordinator, didIssue seekCommand: AVDelegatingPlaybackCoordinatorSeekCommand,
                             completionHandler: @escaping () -> Void)
    /// Get ready to play at `bufferingCommand.anticipatedPlaybackRate`, by its
    /// `completionDueDate`.
    func playbackCoordinator(_ coordinator: AVDelegatingPlaybackCoordinator, didIssue bufferingCommand: AVDelegatingPlaybackCoordinatorBufferingCommand,
                             completionHandler: @escaping () -> Void)
}

/// AVFoundation's `AVDelegatingPlaybackCoordinatorPlaybackControlCommand`: what every command
/// carries.
public class AVDelegatingPlaybackCoordinatorPlaybackControlCommand {
    /// The other participant whose change led to the command, as the coordinator knew it when
    /// it issued the command; nil for this participant's own change and for a command the
    /// coordinator issued by itself (a catch-up, a re-mapping of the clock).
    public let originator: AVCoordinatedPlaybackParticipant?
    /// The item the command is for: a player on another item calls the handler without
    /// applying it ("" when the group has none).
    public let expectedCurrentItemIdentifier: String

    init(originator: AVCoordinatedPlaybackParticipant?, expectedCurrentItemIdentifier: String?) {
        self.originator = originator
        self.expectedCurrentItemIdentifier = expectedCurrentItemIdentifier ?? ""
    }
}

/// AVFoundation's `AVDelegatingPlaybackCoordinatorPlayCommand`: be at `itemTime` at host clock
/// time `hostClockTime`, playing at `rate`.
public final class AVDelegatingPlaybackCoordinatorPlayCommand: AVDelegatingPlaybackCoordinatorPlaybackControlCommand {
    /// Media seconds per host second, the session clock's drift against the host clock in it.
    public let rate: Float
    /// The media time to be at, at `hostClockTime`.
    public let itemTime: CMTime
    /// The host clock time (the raw monotonic clock, in nanoseconds) at which `itemTime` plays.
    public let hostClockTime: CMTime
    /// Tandem's command, with its `HostInstant`s and `ItemTime`s.
    public let command: PlayCommand

    init(_ command: PlayCommand, originator: AVCoordinatedPlaybackParticipant?) {
        self.command = command
        rate = Float(command.rate)
        itemTime = CMTime(command.itemTime)
        hostClockTime = CMTime(value: command.hostTime.nanoseconds, timescale: CMTime.nanosecondTimescale)
        super.init(originator: originator, expectedCurrentItemIdentifier: command.expectedCurrentItemIdentifier)
    }
}

/// AVFoundation's `AVDelegatingPlaybackCoordinatorPauseCommand`: pause, getting ready to play
/// again when the group waits in anticipation of playback.
public final class AVDelegatingPlaybackCoordinatorPauseCommand: AVDelegatingPlaybackCoordinatorPlaybackControlCommand {
    /// Whether to get ready to play (the group waits to play).
    public let shouldBufferInAnticipationOfPlayback: Bool
    /// The rate the group will play at once it resumes (0 when it paused for good).
    public let anticipatedPlaybackRate: Float
    /// Tandem's command, with the media time and host instant to pause at.
    public let command: PauseCommand

    init(_ command: PauseCommand, originator: AVCoordinatedPlaybackParticipant?) {
        self.command = command
        shouldBufferInAnticipationOfPlayback = command.shouldBufferInAnticipationOfPlayback
        anticipatedPlaybackRate = Float(command.anticipatedPlaybackRate)
        super.init(originator: originator, expectedCurrentItemIdentifier: command.expectedCurrentItemIdentifier)
    }
}

/// AVFoundation's `AVDelegatingPlaybackCoordinatorSeekCommand`: move to `itemTime`.
public final class AVDelegatingPlaybackCoordinatorSeekCommand: AVDelegatingPlaybackCoordinatorPlaybackControlCommand {
    /// The media time to move to.
    public let itemTime: CMTime
    /// Whether to get ready to play there, since playback resumes soon.
    public let shouldBufferInAnticipationOfPlayback: Bool
    /// The rate playback resumes at (0 when paused).
    public let anticipatedPlaybackRate: Float
    /// When the coordinator expects the handler at the latest, on the wall clock.
    public let completionDueDate: Date?
    /// Tandem's command, its due date a `HostInstant`.
    public let command: SeekCommand

    init(_ command: SeekCommand, originator: AVCoordinatedPlaybackParticipant?, hostNow: HostInstant) {
        self.command = command
        itemTime = CMTime(command.itemTime)
        shouldBufferInAnticipationOfPlayback = command.shouldBufferInAnticipationOfPlayback
        anticipatedPlaybackRate = Float(command.anticipatedPlaybackRate)
        completionDueDate = wallClockDate(of: command.completionDueDate, hostNow: hostNow)
        super.init(originator: originator, expectedCurrentItemIdentifier: command.expectedCurrentItemIdentifier)
    }
}

/// AVFoundation's `AVDelegatingPlaybackCoordinatorBufferingCommand`: get ready to play.
public final class AVDelegatingPlaybackCoordinatorBufferingCommand: AVDelegatingPlaybackCoordinatorPlaybackControlCommand {
    /// The rate playback will resume at.
    public let anticipatedPlaybackRate: Float
    /// When the coordinator expects the handler at the latest, on the wall clock.
    public let completionDueDate: Date?
    /// Tandem's command, with where playback resumes.
    public let command: BufferingCommand

    init(_ command: BufferingCommand, originator: AVCoordinatedPlaybackParticipant?, hostNow: HostInstant) {
        self.command = command
        anticipatedPlaybackRate = Float(command.anticipatedPlaybackRate)
        completionDueDate = wallClockDate(of: command.completionDueDate, hostNow: hostNow)
        super.init(originator: originator, expectedCurrentItemIdentifier: command.expectedCurrentItemIdentifier)
    }
}

/// The wall-clock date of host instant `instant`, `hostNow` being the host clock's present.
private func wallClockDate(of instant: HostInstant, hostNow: HostInstant) -> Date {
    Date(timeIntervalSinceNow: (instant - hostNow).seconds)
}

/// Tandem's delegate for a program's AVFoundation-style one: each `PlaybackCommand` becomes
/// Apple's command class and goes to the overload Apple's protocol has for it, and the item is
/// the one the program last gave `transitionToItem(withIdentifier:proposingInitialTimingBasedOn:)`.
/// The coordinator keeps the adapter alive; the adapter holds the program's player weakly, as
/// Apple's coordinator does.
final class PlaybackControlDelegateAdapter: PlaybackCoordinatorDelegate, @unchecked Sendable {
    // Unchecked: the program's player is the program's own object, not `Sendable`, which the
    // program keeps and the coordinator calls, as Apple's coordinator calls it from its queue.
    // The adapter's own state is written by the program's thread and read on the coordinator's
    // executor behind `lock`; the player is called on the coordinator's executor alone, one
    // command at a time.
    private let lock = NSLock()
    private weak var storedTarget: (any AVPlaybackCoordinatorPlaybackControlDelegate)?
    private var storedItemIdentifier: String?

    init(_ target: any AVPlaybackCoordinatorPlaybackControlDelegate) {
        storedTarget = target
    }

    /// The program's player, while it lives.
    var target: (any AVPlaybackCoordinatorPlaybackControlDelegate)? { lock.withLock { storedTarget } }

    /// The item the program's player has, as the program last said.
    var currentItemIdentifier: String? {
        get { lock.withLock { storedItemIdentifier } }
        set { lock.withLock { storedItemIdentifier = newValue } }
    }

    var currentItemIdentity: String? { nil }

    func playbackCoordinator(_ coordinator: PlaybackCoordinator, didIssue command: PlaybackCommand,
                             completion: @escaping @Sendable () -> Void) {
        // A player gone: the command is done with, as Apple's coordinator goes on without one.
        guard let target else { return completion() }
        let now = coordinator.scheduler.now
        let originator = command.originator.flatMap { id in coordinator.otherParticipants.first { $0.identifier == id } }
        switch command {
        case .play(let play):
            target.playbackCoordinator(coordinator, didIssue: AVDelegatingPlaybackCoordinatorPlayCommand(play, originator: originator),
                                       completionHandler: completion)
        case .pause(let pause):
            target.playbackCoordinator(coordinator, didIssue: AVDelegatingPlaybackCoordinatorPauseCommand(pause, originator: originator),
                                       completionHandler: completion)
        case .seek(let seek):
            target.playbackCoordinator(coordinator, didIssue: AVDelegatingPlaybackCoordinatorSeekCommand(seek, originator: originator, hostNow: now),
                                       completionHandler: completion)
        case .buffer(let buffer):
            target.playbackCoordinator(coordinator,
                                       didIssue: AVDelegatingPlaybackCoordinatorBufferingCommand(buffer, originator: originator, hostNow: now),
                                       completionHandler: completion)
        }
    }
}

extension PlaybackCoordinator {
    /// A coordinator driving a player written for AVFoundation, as
    /// `AVDelegatingPlaybackCoordinator(playbackControlDelegate:)`: the player is held weakly, as
    /// Apple's coordinator holds it, and is issued Apple's command classes.
    public convenience init(playbackControlDelegate: any AVPlaybackCoordinatorPlaybackControlDelegate) {
        self.init()
        adoptDelegate(PlaybackControlDelegateAdapter(playbackControlDelegate))
    }

    /// The item the player has, as AVFoundation's `currentItemIdentifier`: the delegate's.
    public var currentItemIdentifier: String? { delegate?.currentItemIdentifier }

    /// Moves this participant to the item `itemIdentifier` and proposes it to the group, starting
    /// at `snapshotTime` (the start when nil), as AVFoundation's
    /// `transitionToItem(withIdentifier:proposingInitialTimingBasedOn:)`. A nil identifier
    /// leaves the item. A refusal (a time outside the item, a policy that keeps changes to
    /// operators) changes nothing in the group and is reported as a `requestRefused` event.
    public func transitionToItem(withIdentifier itemIdentifier: String?, proposingInitialTimingBasedOn snapshotTime: CMTime?) {
        if let adapter = delegate as? PlaybackControlDelegateAdapter { adapter.currentItemIdentifier = itemIdentifier }
        guard let itemIdentifier else { return }
        let start = snapshotTime.flatMap { ItemTime($0) } ?? .zero
        coordinateTransition(toItem: itemIdentifier, at: start)
    }
}
