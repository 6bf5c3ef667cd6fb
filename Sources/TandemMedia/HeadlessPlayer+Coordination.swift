import TandemClock
import TandemPlayback
import TandemIdentity
import TandemPlayerSupport

/// Carries out a coordinator's commands on a `HeadlessPlayer`: each command becomes a
/// presentation timeline anchored at the raw monotonic instant the command names, so that frames
/// are presented straight from the shared timeline.
final class HeadlessPlayerCoordination: PlaybackCoordinatorDelegate, @unchecked Sendable {
    // Weak: the player owns its coordinator, which owns this delegate.
    weak var player: HeadlessPlayer?
    let itemIdentifier: String

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

    /// Carries `command` out and completes it at once: every command's instants are host
    /// instants and its rate is in media seconds per host second (the coordinator's clock
    /// mapping), so that the player follows the command as it is, and never asks the coordinator.
    func playbackCoordinator(_ coordinator: PlaybackCoordinator, didIssue command: PlaybackCommand,
                             completion: @escaping @Sendable () -> Void) {
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
            try? player.setTimeline(PresentationTimeline(rate: rate, anchorMediaTime: play.itemTime.nanoseconds,
                                                         anchorLocalTime: play.hostTime.nanoseconds))
        case .pause(let pause):
            try? player.setTimeline(.paused(at: pause.itemTime.nanoseconds, from: pause.hostTime.nanoseconds))
        case .seek, .buffer:
            // The player seeks and decodes ahead with the play or pause command that follows (its
            // instant is ahead): ready at once.
            break
        }
    }
}
