import Synchronization
import TandemClock
import TandemPlayback

/// Carries out a coordinator's commands on a `HeadlessPlayer`, as `HeadlessPlayer.Options.following`
/// says.
///
/// Scheduled (the default): each command becomes a presentation timeline anchored at the raw
/// monotonic instant the command names, so that frames are presented straight from the shared
/// timeline. On receipt (a benchmarking baseline): see `applyOnReceipt(_:player:coordinator:clock:)`.
final class HeadlessPlayerCoordination: PlaybackCoordinatorDelegate, @unchecked Sendable {
    // Weak: the player owns its coordinator, which owns this delegate.
    weak var player: HeadlessPlayer?
    let itemIdentifier: String
    let following: TimelineFollowing
    /// On receipt: the last timeline version applied. Held while a command is applied, so that
    /// two commands cannot interleave.
    private let appliedVersion = Mutex<UInt64?>(nil)

    init(itemIdentifier: String, following: TimelineFollowing = .scheduled) {
        self.itemIdentifier = itemIdentifier
        self.following = following
    }

    var currentItemIdentifier: String? { itemIdentifier }

    func playbackCoordinator(_ coordinator: PlaybackCoordinator, didIssue command: PlaybackCommand,
                             completion: @escaping @Sendable () -> Void) {
        defer { completion() }
        guard let player, let clock = coordinator.localClock else { return }
        // A command for another item is stale: completed, not applied.
        if let expected = command.expectedCurrentItemIdentifier, expected != itemIdentifier { return }
        if following == .onReceipt {
            applyOnReceipt(command, player: player, coordinator: coordinator, clock: clock)
            return
        }
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

    /// The baseline, "apply on receipt", as most watch-together tools behave: no scheduling and no
    /// drift correction, every change applied when it arrives, on the raw monotonic clock.
    ///
    /// - Each timeline version is applied once, when its first command arrives; later commands of
    ///   an applied version (the coordinator re-issues the timeline every second while playing)
    ///   are ignored, except a play command while the player is paused: the catch-up after a
    ///   suspension of this participant's own, during which the player was frozen.
    /// - A fresh change (the shared timeline's anchor is still ahead of the session clock at
    ///   receipt) is applied as the command carries it, from now: play from `itemTime` at
    ///   `rate` exactly; pause at `itemTime`. It so takes effect up to the relay's lead before
    ///   its effective instant, at a different instant on each participant (each receives it
    ///   after its own network delay): what the baseline measures.
    /// - A timeline already in force (a late joiner's, a catch-up) is taken up at the position it
    ///   has now, `itemTime − rate × (hostTime − now)` on this participant's clock, as if the
    ///   group had reported its position at the instant it arrived: with the synchronised clock
    ///   behind that position, the most favourable case for the baseline.
    private func applyOnReceipt(_ command: PlaybackCommand, player: HeadlessPlayer, coordinator: PlaybackCoordinator,
                                clock: any MonotonicDerivedClock) {
        appliedVersion.withLock { applied in
            let isCatchUp: Bool
            if case .play = command, applied == command.version, player.timeline.rate == 0 {
                isCatchUp = true
            } else {
                isCatchUp = false
            }
            guard applied != command.version || isCatchUp else { return }
            let now = clock.now()
            let instant = clock.monotonicTime(atLocal: now)
            let timeline = coordinator.timeline
            let fresh = !isCatchUp && timeline.version == command.version
                && coordinator.sessionTime(atLocalTime: now).map { timeline.anchorSessionTime > $0 } == true
            switch command {
            case .play(let play):
                let position = fresh ? play.itemTime : play.itemTime - Int64((play.rate * Double(play.hostTime - now)).rounded())
                try? player.setTimeline(PresentationTimeline(rate: play.rate, anchorMediaTime: max(0, position), anchorLocalTime: instant))
            case .pause(let pause):
                try? player.setTimeline(.paused(at: pause.itemTime, from: instant))
            case .seek(let seek):
                try? player.setTimeline(.paused(at: seek.itemTime, from: instant), discontinuous: true)
            case .buffer(let buffer):
                try? player.setTimeline(.paused(at: buffer.itemTime, from: instant))
            }
            applied = command.version
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
