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
    /// On receipt: the last timeline applied, and how far ahead of the shared timeline the last
    /// fresh change put this player. Held while a command is applied, so that two commands
    /// cannot interleave.
    private let receipt = Mutex(ReceiptState())

    /// What the baseline remembers between commands.
    private struct ReceiptState {
        var applied: AppliedTimeline?
        /// Session ns between receiving the last fresh change and its effective instant; until
        /// one is seen, the relay's shortest lead.
        var lead: Int64 = HeadlessPlayerCoordination.shortestRelayLead
    }

    /// The relay's shortest lead (`RelayCoreConfiguration.minimumLead`): on loopback, how far
    /// ahead of its effective instant a change reaches everyone.
    static let shortestRelayLead: Int64 = 30_000_000

    /// What makes a timeline a change for the baseline: where and how fast it plays, not its
    /// version (the relay numbers every proposal, reports of loaded items included).
    private struct AppliedTimeline: Equatable {
        var item: String?
        var anchorSessionTime: Int64
        var anchorMediaTime: Int64
        var rate: Double
        /// The version, when the command's timeline is no longer the coordinator's.
        var version: UInt64?
    }

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
            // The session clock's drift on top of the group's rate, within the player's range
            // (a rate of 4 must not be refused for a clock running fast by a few ppm).
            let rate = min(max(play.rate * sessionSecondsPerMonotonicSecond(coordinator, clock: clock, near: instant),
                               PresentationTimeline.minimumRate), PresentationTimeline.maximumRate)
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
    /// clock synchronisation, every change applied when it arrives, on this participant's own clock.
    ///
    /// - Each change is applied once, when its first command arrives; later commands of the same
    ///   timeline (the coordinator re-issues it every second while playing, and the relay gives
    ///   a new version to proposals that leave it as it is) are ignored, except a play command
    ///   while the player is paused: the catch-up after a suspension of this participant's own,
    ///   during which the player was frozen.
    /// - A fresh change (the shared timeline's anchor is still ahead of the session clock at
    ///   receipt) is applied as the command carries it, from now: play from `itemTime` at `rate`
    ///   of this participant's clock; pause at `itemTime`. It so takes effect up to the relay's
    ///   lead before its effective instant, at a different instant on each participant (each
    ///   receives it after its own network delay): what the baseline measures.
    /// - Playing at `rate` of this participant's clock means its drift goes uncorrected, as a
    ///   player pacing frames by its machine's clock does: with an injected drift, the raw
    ///   monotonic rate is `rate` times the local clock's seconds per raw second.
    /// - A timeline already in force (a late joiner's, a catch-up) is taken up where the others
    ///   show it: peers acting on receipt run ahead of the shared timeline by the time between
    ///   receiving a change and its effective instant (the relay's lead less their delay), so
    ///   the position is `itemTime − rate × (hostTime − now)` plus `rate` times the lead this
    ///   participant measured on its last fresh change (the relay's shortest lead when it has
    ///   seen none). As if the group had reported its position at the instant it arrived, over
    ///   a synchronised clock: the most favourable case for the baseline.
    private func applyOnReceipt(_ command: PlaybackCommand, player: HeadlessPlayer, coordinator: PlaybackCoordinator,
                                clock: any MonotonicDerivedClock) {
        receipt.withLock { state in
            let timeline = coordinator.timeline
            let current = timeline.version == command.version
            let key = AppliedTimeline(item: timeline.item, anchorSessionTime: current ? timeline.anchorSessionTime : 0,
                                      anchorMediaTime: current ? timeline.anchorMediaTime : 0, rate: timeline.rate,
                                      version: current ? nil : command.version)
            let isCatchUp: Bool
            if case .play = command, state.applied == key, player.timeline.rate == 0 {
                isCatchUp = true
            } else {
                isCatchUp = false
            }
            guard state.applied != key || isCatchUp else { return }
            let now = clock.now()
            let instant = clock.monotonicTime(atLocal: now)
            let sessionNow = coordinator.sessionTime(atLocalTime: now)
            let fresh = !isCatchUp && current && sessionNow.map { timeline.anchorSessionTime > $0 } == true
            if fresh, let sessionNow { state.lead = timeline.anchorSessionTime.saturatingSubtracting(sessionNow) }
            switch command {
            case .play(let play):
                let ahead = state.lead.saturatingSubtracting(play.hostTime.saturatingSubtracting(now))
                let position = fresh ? play.itemTime : play.itemTime.saturatingAdding(ahead.saturatingScaled(by: play.rate))
                let rate = min(max(play.rate * localSecondsPerMonotonicSecond(clock, near: instant), PresentationTimeline.minimumRate),
                               PresentationTimeline.maximumRate)
                try? player.setTimeline(PresentationTimeline(rate: rate, anchorMediaTime: max(0, position), anchorLocalTime: instant))
            case .pause(let pause):
                try? player.setTimeline(.paused(at: pause.itemTime, from: instant))
            case .seek(let seek):
                try? player.setTimeline(.paused(at: seek.itemTime, from: instant), discontinuous: true)
            case .buffer(let buffer):
                try? player.setTimeline(.paused(at: buffer.itemTime, from: instant))
            }
            state.applied = key
        }
    }

    /// How many seconds of this participant's own clock pass per raw monotonic second near
    /// `instant`: 1 for the system clock, 1 + drift for a clock with an injected drift.
    private func localSecondsPerMonotonicSecond(_ clock: any MonotonicDerivedClock, near instant: Int64) -> Double {
        let span: Int64 = 10_000_000_000
        let elapsed = clock.localTime(atMonotonic: instant.saturatingAdding(span)).saturatingSubtracting(clock.localTime(atMonotonic: instant))
        return elapsed > 0 ? Double(elapsed) / Double(span) : 1
    }

    /// How many session-clock seconds pass per raw monotonic second near `instant`: the drift the
    /// session clock's estimate has measured, which the presentation rate must include.
    private func sessionSecondsPerMonotonicSecond(_ coordinator: PlaybackCoordinator, clock: any MonotonicDerivedClock,
                                                 near instant: Int64) -> Double {
        let span: Int64 = 10_000_000_000
        guard let start = coordinator.sessionTime(atLocalTime: clock.localTime(atMonotonic: instant)),
              let end = coordinator.sessionTime(atLocalTime: clock.localTime(atMonotonic: instant.saturatingAdding(span))),
              end > start else { return 1 }
        return Double(end.saturatingSubtracting(start)) / Double(span)
    }
}
