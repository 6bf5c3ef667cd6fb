import TandemClock
import TandemPlayback

/// Carries out a coordinator's commands on a `HeadlessPlayer`: each becomes a presentation
/// timeline anchored at the raw monotonic instant the command names, so that frames are
/// presented straight from the shared timeline.
final class HeadlessPlayerCoordination: PlaybackCoordinatorDelegate, @unchecked Sendable {
    // Weak: the player owns its coordinator, which owns this delegate.
    weak var player: HeadlessPlayer?
    let itemIdentifier: String

    init(itemIdentifier: String) {
        self.itemIdentifier = itemIdentifier
    }

    var currentItemIdentifier: String? { itemIdentifier }

    func playbackCoordinator(_ coordinator: PlaybackCoordinator, didIssue command: PlaybackCommand,
                             completion: @escaping @Sendable () -> Void) {
        defer { completion() }
        guard let player, let clock = coordinator.localClock else { return }
        // A command for another item is stale: completed, not applied.
        if let expected = command.expectedCurrentItemIdentifier, expected != itemIdentifier { return }
        switch command {
        case .play(let play):
            let instant = clock.monotonicTime(atLocal: play.hostTime)
            let rate = play.rate * sessionSecondsPerMonotonicSecond(coordinator, clock: clock, near: instant)
            try? player.setTimeline(PresentationTimeline(rate: rate, anchorMediaTime: play.itemTime, anchorLocalTime: instant))
        case .pause(let pause):
            try? player.setTimeline(.paused(at: pause.itemTime, from: clock.monotonicTime(atLocal: pause.hostTime)))
        case .seek(let seek):
            try? player.setTimeline(.paused(at: seek.itemTime, from: MonotonicClock.now()), discontinuous: true)
        case .buffer(let buffer):
            try? player.setTimeline(.paused(at: buffer.itemTime, from: MonotonicClock.now()))
        }
    }

    /// How many session-clock seconds pass per raw monotonic second near `instant`: the drift the
    /// session clock's estimate has measured, which the presentation rate must include.
    private func sessionSecondsPerMonotonicSecond(_ coordinator: PlaybackCoordinator, clock: any MonotonicDerivedClock,
                                                 near instant: Int64) -> Double {
        let span: Int64 = 10_000_000_000
        guard let start = coordinator.sessionTime(atLocalTime: clock.localTime(atMonotonic: instant)),
              let end = coordinator.sessionTime(atLocalTime: clock.localTime(atMonotonic: instant + span)),
              end > start else { return 1 }
        return Double(end - start) / Double(span)
    }
}
