import Foundation
import Synchronization
import TandemClock
import TandemPlayback
import TandemIdentity

/// Carries out a coordinator's commands on a `HeadlessPlayer`: each command becomes a
/// presentation timeline anchored at the raw monotonic instant the command names, so that frames
/// are presented straight from the shared timeline.
final class HeadlessPlayerCoordination: PlaybackCoordinatorDelegate, Sendable {
    /// A weak reference: the player owns its coordinator, which owns this delegate.
    private struct WeakPlayer {
        weak var player: HeadlessPlayer?
    }

    private let reference = Mutex(WeakPlayer())
    let itemIdentifier: String

    /// The player it carries commands out on, set by the player's init once its coordinator
    /// exists; nil once the player is gone.
    var player: HeadlessPlayer? {
        get { reference.withLock { $0.player } }
        set { reference.withLock { $0.player = newValue } }
    }

    init(itemIdentifier: String) {
        self.itemIdentifier = itemIdentifier
    }

    /// The player's current item: the one it opened, or the last one it switched to.
    var currentItemIdentifier: String? { player?.itemIdentifier ?? itemIdentifier }

    /// The current item's content identity, as the program gave it (`PlaybackItem.identity`),
    /// with the duration this player read announced in it.
    var currentItemIdentity: String? {
        guard let player, let identity = player.currentItem.identity else { return nil }
        return ContentIdentity.announcing(duration: player.info.duration, identity)
    }

    /// Carries `command` out: every command's instants are host instants and its rate is in
    /// media seconds per host second (the coordinator's clock mapping), so that the player
    /// follows the command as it is, and never asks the coordinator. A seek in anticipation of
    /// playback completes once its target is decoded (a real pre-roll, below); every other
    /// command at once.
    func playbackCoordinator(_ coordinator: PlaybackCoordinator, didIssue command: PlaybackCommand,
                             completion: @escaping @Sendable () -> Void) {
        if case .seek(let seek) = command, seek.shouldBufferInAnticipationOfPlayback, let player,
           seek.expectedCurrentItemIdentifier.map({ $0 == player.itemIdentifier }) ?? true {
            preroll(seek, player: player, completion: completion)
            return
        }
        defer { completion() }
        guard let player else { return }
        // A command for another item: carried out on that item when the player has it
        // (`HeadlessPlayer.makeAvailable(_:)`, `item(withIdentifier:)`), else completed, not applied.
        if let expected = command.expectedCurrentItemIdentifier, expected != player.itemIdentifier {
            followItem(expected, command: command, player: player)
            return
        }
        switch command {
        case .play(let play):
            // Within the player's range (a rate of 4 must not be refused for a session clock
            // running fast by a few ppm).
            let rate = min(max(play.rate, PresentationTimeline.minimumRate), PresentationTimeline.maximumRate)
            var timeline = PresentationTimeline(rate: rate, anchorItemTime: play.itemTime, anchorHostTime: play.hostTime)
            timeline.group = .init(itemTime: play.timeline.anchorMediaTime, rate: play.timeline.rate)
            try? player.setTimeline(timeline)
        case .pause(let pause):
            try? player.setTimeline(.paused(at: pause.itemTime, from: pause.hostTime))
        case .seek, .buffer:
            // A seek in anticipation of playback is pre-rolled above; any other seek is carried
            // out with the pause that follows (the group does not wait on it). A buffering
            // command is ready at once: the play or pause before it decodes ahead.
            break
        }
    }

    /// A seek's pre-roll, while the group waits to play: the player pauses on the target at once
    /// (what it showed of the old position stops there) and completes the command once the
    /// target's first frames, and with a sound output its first sound, are decoded (or at its
    /// due date, whichever comes first), so that the group's pre-roll gate waits for the
    /// decoding, not only for the command: a play's lead is then never spent decoding the first
    /// frame on a busy machine. The play that follows starts from the same picture, so nothing is
    /// decoded twice. The wait runs on a thread of its own, not the coordinator's.
    private func preroll(_ seek: SeekCommand, player: HeadlessPlayer, completion: @escaping @Sendable () -> Void) {
        do {
            try player.setTimeline(.paused(at: seek.itemTime, from: .now()))
        } catch {
            completion()
            return
        }
        let deadline = seek.completionDueDate
        Thread.detachNewThread { [weak player] in
            player?.waitUntilPrerolled(deadline: deadline)
            completion()
        }
    }
}
