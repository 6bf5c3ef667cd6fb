import Foundation
import TandemClock

// The commands a coordinator issues its delegate, as AVFoundation's
// `AVDelegatingPlaybackCoordinator` issues them (`AVDelegatingPlaybackCoordinatorPlayCommand`,
// `…PauseCommand`, `…SeekCommand`, `…BufferingCommand`, all `…PlaybackControlCommand`s with an
// `expectedCurrentItemIdentifier` and an `originator`; see developer.apple.com/documentation/
// avfoundation/avdelegatingplaybackcoordinatorbufferingcommand). Every instant a player acts on
// is already in host time (the raw monotonic clock a player sleeps to), and every rate is in
// media seconds per host second, with the session clock's drift already in it: the coordinator
// computes both in one place (`ClockMapping`), and a player never calls back into it.

/// Start or keep playing: be at `itemTime` at host instant `hostTime`, advancing at `rate`.
public struct PlayCommand: Sendable, Equatable {
    /// The item the coordinator expects the player to have; a player on another item completes
    /// the command without applying it.
    public var expectedCurrentItemIdentifier: String?
    /// The participant whose proposal led to the command, or nil when the coordinator issued it
    /// by itself (a re-map, a catch-up).
    public var originator: UUID?
    /// Media seconds per host (raw monotonic) second: the group's rate with the session clock's
    /// drift against the host clock in it.
    public var rate: Double
    /// The media time to be at, at `hostTime`.
    public var itemTime: ItemTime
    /// The host instant at which `itemTime` should be playing.
    public var hostTime: HostInstant
    /// When the coordinator expects the completion at the latest; past it, the command is
    /// abandoned (an event says so) and never blocks the next.
    public var completionDueDate: HostInstant
    /// The timeline version the command carries out.
    public var version: UInt64
    /// The shared timeline the command carries out, for players that follow it otherwise (the
    /// on-receipt baseline) and for programs to show.
    public var timeline: SharedTimeline
    /// The session instant at which the coordinator issued the command (its estimate).
    public var issuedAt: SessionInstant
}

/// Pause at `itemTime`, from host instant `hostTime` on.
public struct PauseCommand: Sendable, Equatable {
    /// The item the coordinator expects the player to have.
    public var expectedCurrentItemIdentifier: String?
    /// The participant whose proposal led to the command, or nil.
    public var originator: UUID?
    /// The media time to show while paused.
    public var itemTime: ItemTime
    /// The host instant at which the pause takes effect.
    public var hostTime: HostInstant
    /// Whether the player should get ready to play (the group waits in anticipation of
    /// playback), as Apple's `shouldBufferInAnticipationOfPlayback`.
    public var shouldBufferInAnticipationOfPlayback: Bool
    /// The rate the group will play at once it resumes (0 when it paused for good).
    public var anticipatedPlaybackRate: Double
    /// When the coordinator expects the completion at the latest.
    public var completionDueDate: HostInstant
    /// The timeline version the command carries out.
    public var version: UInt64
    /// The shared timeline the command carries out.
    public var timeline: SharedTimeline
    /// The session instant at which the coordinator issued the command.
    public var issuedAt: SessionInstant
}

/// Move to `itemTime`: issued for a jump (a seek, a new item, a resumption elsewhere), before the
/// play or pause command that follows it, which the coordinator issues once this one completes
/// (or is abandoned at its due date).
public struct SeekCommand: Sendable, Equatable {
    /// The item the coordinator expects the player to have.
    public var expectedCurrentItemIdentifier: String?
    /// The participant whose proposal led to the command, or nil.
    public var originator: UUID?
    /// The media time to move to.
    public var itemTime: ItemTime
    /// Whether the player should buffer, since playback will resume soon: a player that pre-rolls
    /// with the play command itself may complete at once.
    public var shouldBufferInAnticipationOfPlayback: Bool
    /// The rate playback will resume at (0 when paused).
    public var anticipatedPlaybackRate: Double
    /// When the coordinator expects the completion at the latest: the instant the play or pause
    /// that follows takes effect.
    public var completionDueDate: HostInstant
    /// The timeline version the command carries out.
    public var version: UInt64
}

/// Get ready to play `itemTime` (decode ahead) while the group waits in anticipation of
/// playback; complete once ready to play at `anticipatedPlaybackRate`.
public struct BufferingCommand: Sendable, Equatable {
    /// The item the coordinator expects the player to have.
    public var expectedCurrentItemIdentifier: String?
    /// The participant whose proposal led to the command, or nil.
    public var originator: UUID?
    /// Where playback will resume.
    public var itemTime: ItemTime
    /// The rate playback will resume at.
    public var anticipatedPlaybackRate: Double
    /// When the coordinator expects the completion at the latest.
    public var completionDueDate: HostInstant
    /// The timeline version the command belongs to.
    public var version: UInt64
}

/// A command from the coordinator to a player.
public enum PlaybackCommand: Sendable, Equatable {
    /// Play.
    case play(PlayCommand)
    /// Pause.
    case pause(PauseCommand)
    /// Seek.
    case seek(SeekCommand)
    /// Buffer.
    case buffer(BufferingCommand)

    /// The item the command expects.
    public var expectedCurrentItemIdentifier: String? {
        switch self {
        case .play(let command): command.expectedCurrentItemIdentifier
        case .pause(let command): command.expectedCurrentItemIdentifier
        case .seek(let command): command.expectedCurrentItemIdentifier
        case .buffer(let command): command.expectedCurrentItemIdentifier
        }
    }

    /// The participant whose proposal led to it, or nil.
    public var originator: UUID? {
        switch self {
        case .play(let command): command.originator
        case .pause(let command): command.originator
        case .seek(let command): command.originator
        case .buffer(let command): command.originator
        }
    }

    /// When the coordinator expects its completion at the latest.
    public var completionDueDate: HostInstant {
        switch self {
        case .play(let command): command.completionDueDate
        case .pause(let command): command.completionDueDate
        case .seek(let command): command.completionDueDate
        case .buffer(let command): command.completionDueDate
        }
    }

    /// The timeline version it carries out.
    public var version: UInt64 {
        switch self {
        case .play(let command): command.version
        case .pause(let command): command.version
        case .seek(let command): command.version
        case .buffer(let command): command.version
        }
    }
}

/// A player that a `PlaybackCoordinator` drives, in the manner of
/// `AVPlaybackCoordinatorPlaybackControlDelegate`: each command comes with a completion that the
/// player must call once it has carried the command out (or decided not to, when the command
/// expects another item than the one it has: stale commands are completed, not applied). A
/// completion not called by the command's `completionDueDate` abandons the command; the
/// coordinator goes on.
///
/// The coordinator issues commands from one serial executor, one at a time: coordinating with a
/// session, the session's event loop (the participant's loop, which its relay link runs on too);
/// connected to a `PlaybackCoordinationMedium`, the medium's queue; given a scheduler, that one.
/// A player must not block in `playbackCoordinator(_:didIssue:completion:)` (start the work,
/// complete later); it may call `completion` before returning.
public protocol PlaybackCoordinatorDelegate: AnyObject, Sendable {
    /// Carry out `command`, then call `completion`.
    func playbackCoordinator(_ coordinator: PlaybackCoordinator, didIssue command: PlaybackCommand,
                             completion: @escaping @Sendable () -> Void)
    /// The item the player has now (its identifier), to check commands against.
    var currentItemIdentifier: String? { get }
    /// The current item's content identity (`MediaIdentity`), which `coordinateWithSession(_:)`
    /// reports to the group with the identifier; nil by default.
    var currentItemIdentity: String? { get }
}
