import Synchronization
import TandemClock
import TandemPlayback
import TandemIdentity
import TandemPlayerSupport

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
        /// Session time between receiving the last fresh change and its effective instant; until
        /// one is seen, the relay's shortest lead.
        var lead: TimeSpan = HeadlessPlayerCoordination.shortestRelayLead
    }

    /// The relay's shortest lead (`RelayCoreConfiguration.minimumLead`): on loopback, how far
    /// ahead of its effective instant a change reaches everyone.
    static let shortestRelayLead = TimeSpan.milliseconds(30)

    /// What makes a timeline a change for the baseline: where and how fast it plays, not its
    /// version (the relay numbers every proposal, reports of loaded items included).
    private struct AppliedTimeline: Equatable {
        var item: String?
        var anchorSessionTime: SessionInstant
        var anchorMediaTime: ItemTime
        var rate: Double
    }

    init(itemIdentifier: String, following: TimelineFollowing = .scheduled) {
        self.itemIdentifier = itemIdentifier
        self.following = following
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
        if following == .onReceipt {
            applyOnReceipt(command, player: player, clock: coordinator.localClock)
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
    private func applyOnReceipt(_ command: PlaybackCommand, player: HeadlessPlayer, clock: (any MonotonicDerivedClock)?) {
        let carried: (timeline: SharedTimeline, issuedAt: SessionInstant)
        switch command {
        case .play(let play): carried = (play.timeline, play.issuedAt)
        case .pause(let pause): carried = (pause.timeline, pause.issuedAt)
        // The play or pause that follows carries the change.
        case .seek, .buffer: return
        }
        receipt.withLock { state in
            let timeline = carried.timeline
            let key = AppliedTimeline(item: timeline.item, anchorSessionTime: timeline.anchorSessionTime,
                                      anchorMediaTime: timeline.anchorMediaTime, rate: timeline.rate)
            let isCatchUp: Bool
            if case .play = command, state.applied == key, player.timeline.rate == 0 {
                isCatchUp = true
            } else {
                isCatchUp = false
            }
            guard state.applied != key || isCatchUp else { return }
            let instant = MonotonicClock.now()
            let fresh = !isCatchUp && timeline.anchorSessionTime > carried.issuedAt
            if fresh { state.lead = timeline.anchorSessionTime - carried.issuedAt }
            switch command {
            case .play(let play):
                let ahead = state.lead - (play.hostTime - HostInstant(nanoseconds: instant))
                let position = fresh ? play.itemTime : play.itemTime + ahead * timeline.rate
                let drift = clock.map { localSecondsPerMonotonicSecond($0, near: instant) } ?? 1
                let rate = min(max(timeline.rate * drift, PresentationTimeline.minimumRate), PresentationTimeline.maximumRate)
                try? player.setTimeline(PresentationTimeline(rate: rate, anchorMediaTime: max(0, position.nanoseconds),
                                                             anchorLocalTime: instant))
            case .pause(let pause):
                try? player.setTimeline(.paused(at: pause.itemTime.nanoseconds, from: instant))
            case .seek, .buffer:
                break
            }
            state.applied = key
        }
    }

    /// How many seconds of this participant's own clock pass per raw monotonic second near
    /// `instant`: 1 for the system clock, 1 + drift for a clock with an injected drift (the
    /// baseline paces frames by the participant's own clock, whose drift nobody corrects).
    private func localSecondsPerMonotonicSecond(_ clock: any MonotonicDerivedClock, near instant: Int64) -> Double {
        let span: Int64 = 10_000_000_000
        let elapsed = clock.localTime(atMonotonic: instant.saturatingAdding(span)).saturatingSubtracting(clock.localTime(atMonotonic: instant))
        return elapsed > 0 ? Double(elapsed) / Double(span) : 1
    }
}
