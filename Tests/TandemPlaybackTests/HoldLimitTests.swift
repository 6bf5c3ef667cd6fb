import Foundation
import Testing
import TandemClock
@testable import TandemPlayback

/// Waiting has limits (`CoordinationCore+Holds.swift`): a suspension holds the group for at most
/// its reason's default or the group's cap, released by rule at an instant every participant
/// computes alike from ordered instants, with an event naming it.
@Suite struct HoldLimitTests {
    static let second: Int64 = 1_000_000_000
    static let ms: Int64 = 1_000_000
    /// The session clock runs this far ahead of the host clocks.
    static let offset: Int64 = 1_000 * second
    let ana = UUID()
    let ben = UUID()
    let cleo = UUID()
    let stall = UUID()

    /// Ordered at session `at` ms (plus `offset`), effective `lead` ms later.
    func ordered(_ order: UInt64, _ who: UUID, at: Int64, lead: Int64 = 0, _ proposal: PlaybackProposal) -> OrderedProposal {
        OrderedProposal(originator: who, order: order, orderedAt: sessionNS(Self.offset + at * Self.ms),
                        effectiveAt: sessionNS(Self.offset + (at + lead) * Self.ms), proposal: proposal)
    }

    func session(_ milliseconds: Int64) -> SessionInstant { sessionNS(Self.offset + milliseconds * Self.ms) }

    /// Ana, Ben and Cleo on the film; Ana plays it from 0 at 1 s (no pre-roll gate); then `more`.
    func history(_ more: [PlaybackProposal] = [], at times: [Int64] = []) -> [OrderedProposal] {
        var records = [ana, ben, cleo].enumerated().map { index, who in
            ordered(UInt64(index + 1), who, at: 0, .state(item: "film", identity: "d=600.000;h=aa", ready: true))
        }
        records.append(ordered(4, ana, at: 0, .transition(item: "film", at: .zero)))
        records.append(ordered(5, ana, at: 1_000, .setRate(1)))
        for (index, proposal) in more.enumerated() {
            records.append(ordered(UInt64(6 + index), proposal.isBen ? ben : ana, at: times[index], proposal))
        }
        return records
    }

    static func begin(_ id: UUID, _ reason: SuspensionReason = .stallRecovery) -> PlaybackProposal {
        .beginSuspension(id: id, reason: reason, triggersWaiting: true, waitingLimit: nil)
    }

    func core(_ records: [OrderedProposal]) -> (CoordinationCore, [CoordinationCore.Event]) {
        var core = CoordinationCore(waitsForPreroll: false)
        var events: [CoordinationCore.Event] = []
        for record in records { events += core.apply(record) }
        return (core, events)
    }

    static func expired(_ events: [CoordinationCore.Event]) -> [(CoordinationCore.Suspension, TimeSpan, Bool)] {
        events.compactMap { if case .holdExpired(_, let suspension, let limit, let waiting) = $0 { (suspension, limit, waiting) } else { nil } }
    }

    // MARK: The rule

    @Test func eachReasonHasItsDefaultAndAStallHoldsFifteenSeconds() {
        #expect(SuspensionReason.stallRecovery.defaultHoldLimit == .seconds(15))
        #expect(SuspensionReason.userIsChangingCurrentTime.defaultHoldLimit == .seconds(30))
        #expect(SuspensionReason.coordinatedPlaybackNotPossible.defaultHoldLimit == .seconds(30))
        #expect(SuspensionReason.userActionRequired.defaultHoldLimit == .seconds(60))
        #expect(SuspensionReason.playingInterstitial.defaultHoldLimit == .seconds(120))
        #expect(SuspensionReason(rawValue: "custom").defaultHoldLimit == SuspensionReason.defaultHoldLimitForOtherReasons)
    }

    @Test func aStallHeldPastItsLimitStopsHoldingTheGroupAtTheLimitsInstant() throws {
        // Ben stalls at 5 s: the group waits at media 4 s.
        var (core, _) = core(history([Self.begin(stall)], at: [5_000]))
        #expect(core.isWaiting)
        #expect(core.nextHoldExpiry == session(20_000))
        // A record before the limit changes nothing of it.
        var events = core.apply(ordered(7, cleo, at: 19_999, .state(item: "film", identity: "d=600.000;h=aa", ready: true)))
        #expect(Self.expired(events).isEmpty && core.isWaiting)
        // The next record after it finds the hold released at 20 s, the group playing from 4 s then.
        events = core.apply(ordered(8, cleo, at: 31_000, .state(item: "film", identity: "d=600.000;h=aa", ready: true)))
        let expired = Self.expired(events)
        try #require(expired.count == 1)
        #expect(expired[0].0.participant == ben && expired[0].0.id == stall && expired[0].1 == .seconds(15) && !expired[0].2)
        #expect(!core.isWaiting && core.timeline.rate == 1)
        #expect(core.timeline.anchorSessionTime == session(20_000) && core.timeline.anchorMediaTime == itemNS(4 * Self.second))
        #expect(core.suspensions.map(\.id) == [stall], "the suspension stays; it only stops holding the group")
        // Ben's end later resumes nothing: the group was not waiting for him.
        events = core.apply(ordered(9, ben, at: 32_000, .endSuspension(id: stall, proposedTime: nil)))
        #expect(core.suspensions.isEmpty && core.timeline.anchorSessionTime == session(20_000))
        #expect(!events.contains { if case .groupResumed = $0 { true } else { false } })
    }

    @Test func aSessionCapLowerThanTheReasonsDefaultWins() throws {
        var (core, _) = core(history([.maximumHold(.seconds(5)), Self.begin(stall)], at: [2_000, 5_000]))
        #expect(core.waiting.maximumHold == .seconds(5))
        #expect(core.holdLimit(for: .stallRecovery) == .seconds(5))
        #expect(core.holdLimit(for: .playingInterstitial) == .seconds(5))
        #expect(core.nextHoldExpiry == session(10_000))
        let events = core.apply(ordered(8, cleo, at: 12_000, .state(item: "film", identity: "d=600.000;h=aa", ready: true)))
        #expect(Self.expired(events).map(\.1) == [.seconds(5)])
        #expect(core.timeline.anchorSessionTime == session(10_000) && core.timeline.rate == 1)
        // A cap longer than a reason's default leaves the default.
        let (longer, _) = self.core(history([.maximumHold(.seconds(600)), Self.begin(stall)], at: [2_000, 5_000]))
        #expect(longer.nextHoldExpiry == session(20_000))
    }

    @Test func aCapOfZeroMeansNoSuspensionHoldsTheGroup() {
        let (core, _) = core(history([.maximumHold(.zero), Self.begin(stall)], at: [2_000, 5_000]))
        #expect(!core.isWaiting && core.timeline.rate == 1)
        #expect(core.suspensions.count == 1 && !core.suspensions[0].holdsGroup)
    }

    @Test func aCapLoweredDuringAHoldReleasesItAtTheCapsRecordNotInThePast() throws {
        var (core, _) = core(history([Self.begin(stall)], at: [5_000]))
        let events = core.apply(ordered(7, cleo, at: 12_000, .maximumHold(.seconds(2))))
        #expect(Self.expired(events).count == 1)
        #expect(core.timeline.anchorSessionTime == session(12_000) && core.timeline.rate == 1)
    }

    @Test func aCapOutOfRangeIsSkippedByEveryone() {
        for cap in [TimeSpan.seconds(-1), CoordinationCore.maximumHoldCap + .seconds(1)] {
            var (core, _) = core(history())
            let events = core.apply(ordered(6, ana, at: 2_000, .maximumHold(cap)))
            #expect(events.contains { if case .proposalRejected(let rejection, _, _) = $0 { rejection.reason == .waitingLimitOutOfRange } else { false } })
            #expect(core.waiting.maximumHold == nil)
        }
    }

    @Test func aSuspensionEndingBeforeItsLimitReleasesNothingMore() {
        var (core, _) = core(history([Self.begin(stall), .endSuspension(id: stall, proposedTime: nil)], at: [5_000, 9_000]))
        #expect(!core.isWaiting && core.nextHoldExpiry == nil)
        let anchor = core.timeline
        let events = core.apply(ordered(8, cleo, at: 40_000, .state(item: "film", identity: "d=600.000;h=aa", ready: true)))
        #expect(Self.expired(events).isEmpty)
        #expect(core.timeline.anchorSessionTime == anchor.anchorSessionTime && core.timeline.anchorMediaTime == anchor.anchorMediaTime)
    }

    @Test func twoHoldsExpireInTurnAndTheGroupPlaysOnlyOnceTheLastHasGone() throws {
        let other = UUID()
        var (core, _) = core(history([Self.begin(stall), .beginSuspension(id: other, reason: .userIsChangingCurrentTime, triggersWaiting: true,
                                                                        waitingLimit: nil)], at: [5_000, 6_000]))
        // Cleo's scrubbing (30 s) outlasts Ben's stall (15 s).
        var events = core.apply(ordered(8, cleo, at: 25_000, .state(item: "film", identity: "d=600.000;h=aa", ready: true)))
        #expect(Self.expired(events).map(\.2) == [true])
        #expect(core.isWaiting && core.timeline.rate == 0)
        events = core.apply(ordered(9, cleo, at: 40_000, .state(item: "film", identity: "d=600.000;h=aa", ready: true)))
        #expect(Self.expired(events).map(\.2) == [false])
        #expect(core.timeline.anchorSessionTime == session(36_000) && core.timeline.rate == 1)
    }

    @Test func aLateJoinerReplayingTheHistoryAgreesAndSoDoesASnapshot() throws {
        let records = history([.maximumHold(.seconds(8)), Self.begin(stall), .endSuspension(id: stall, proposedTime: nil)],
                              at: [2_000, 5_000, 30_000])
        // Live: a participant that heard each record as it came, and was woken for the release.
        var live = Peer(ana, skew: 0)
        for record in records { live.order(record, receivedAt: (record.orderedAt.nanoseconds - Self.offset) / Self.ms + 20) }
        #expect(live.emitted.filter { if case .holdExpired = $0.event { true } else { false } }.count == 1)
        // A joiner that came at 31 s and replayed the whole history, with no wake-up in between.
        var joiner = Peer(cleo, skew: 2 * Self.ms)
        for record in records { joiner.order(record, receivedAt: 31_000) }
        #expect(joiner.machine.core == live.machine.core)
        #expect(joiner.emitted.filter { if case .holdExpired = $0.event { true } else { false } }.count == 1)
        #expect(joiner.machine.core.timeline.anchorSessionTime == session(13_000) && joiner.machine.core.timeline.rate == 1)
        // A snapshot of the held group carries when the hold began, and passes the checks.
        var held = CoordinationCore(waitsForPreroll: false)
        for record in records.prefix(7) { _ = held.apply(record) }
        let decoded = try JSONDecoder().decode(CoordinationCore.self, from: JSONEncoder().encode(held))
        #expect(decoded == held && decoded.nextHoldExpiry == session(13_000))
    }

    // MARK: The machines

    /// One participant's machine, its host clock `skew` ns off the others' (its clock estimate).
    struct Peer {
        var machine: CoordinatorMachine
        var wake: HostInstant?
        var emitted: [(at: HostInstant, event: CoordinationCore.Event)] = []
        var plays: [(issuedAt: HostInstant, play: PlayCommand)] = []

        init(_ participant: UUID, skew: Int64) {
            machine = CoordinatorMachine(localParticipant: participant, waitsForPreroll: false)
            _ = machine.onClockMapping(ClockMapping(session: sessionNS(HoldLimitTests.offset + skew), host: .zero, sessionSecondsPerHostSecond: 1),
                                       now: .zero)
        }

        /// Host time for session `milliseconds` (plus the offset), by this peer's clock.
        func host(_ milliseconds: Int64) -> HostInstant {
            machine.mapping!.hostTime(atSession: sessionNS(HoldLimitTests.offset + milliseconds * HoldLimitTests.ms))
        }

        mutating func take(_ wakes: [HostInstant], _ issued: [CoordinatorMachine.IssuedCommand], _ events: [CoordinationCore.Event],
                           now: HostInstant) {
            if let last = wakes.last { wake = last }
            for event in events { emitted.append((now, event)) }
            for command in issued {
                if case .play(let play) = command.command { plays.append((now, play)) }
            }
            // The player completes what it is told at once.
            while let flying = machine.inFlight {
                let completed = machine.onCommandCompleted(flying.id, now: now)
                take(completed.compactMap { if case .wake(let at) = $0 { at } else { nil } },
                     completed.compactMap { if case .issue(let issued) = $0 { issued } else { nil } }, [], now: now)
            }
        }

        mutating func order(_ record: OrderedProposal, receivedAt milliseconds: Int64) {
            let now = host(milliseconds)
            runUntil(now)
            let out = machine.onOrdered(.proposal(record), now: now)
            take(out.compactMap { if case .wake(let at) = $0 { at } else { nil } },
                 out.compactMap { if case .issue(let issued) = $0 { issued } else { nil } },
                 out.compactMap { if case .emit(let event) = $0 { event } else { nil } }, now: now)
        }

        /// Runs the wake-ups due by `end`, each at its instant (or at once, if it asked for a past one).
        mutating func runUntil(_ end: HostInstant) {
            var last = HostInstant.distantPast
            for _ in 0..<10_000 {
                guard let due = wake, due <= end else { return }
                let now = max(due, last)
                last = now
                wake = nil
                let out = machine.onTick(now: now)
                take(out.compactMap { if case .wake(let at) = $0 { at } else { nil } },
                     out.compactMap { if case .issue(let issued) = $0 { issued } else { nil } },
                     out.compactMap { if case .emit(let event) = $0 { event } else { nil } }, now: now)
            }
            Issue.record("the machine asked to be woken without end")
        }
    }

    @Test func twoParticipantsWhoseClocksDifferReleaseTheHoldAlikeWithTheEventAndPlayAtItsInstant() throws {
        // Ana's and Cleo's clocks disagree by 3 ms about session time; the records reach them at different moments.
        var peers = [Peer(ana, skew: 0), Peer(cleo, skew: 3 * Self.ms)]
        let records = history([Self.begin(stall)], at: [5_000])
        for index in peers.indices {
            for record in records {
                peers[index].order(record, receivedAt: (record.orderedAt.nanoseconds - Self.offset) / Self.ms + 20 + 7 * Int64(index))
            }
            peers[index].runUntil(peers[index].host(26_000))
        }
        let release = session(20_000)
        for peer in peers {
            let expired = peer.emitted.filter { if case .holdExpired = $0.event { true } else { false } }
            try #require(expired.count == 1, "\(peer.emitted.map(\.event))")
            guard case .holdExpired(let timeline, let suspension, let limit, let waiting) = expired[0].event else { continue }
            #expect(suspension.participant == ben && limit == .seconds(15) && !waiting)
            #expect(timeline.anchorSessionTime == release && timeline.anchorMediaTime == itemNS(4 * Self.second))
            // Told at the instant itself, not at the next record.
            let told = peer.machine.mapping!.sessionTime(atHost: expired[0].at)
            #expect(told >= release && told - release < .milliseconds(1))
            // The player was told ahead to play from 4 s at the release's own instant.
            let play = try #require(peer.plays.first { $0.play.timeline.anchorSessionTime == release })
            #expect(peer.machine.mapping!.sessionTime(atHost: play.play.hostTime) == release)
            #expect(play.play.itemTime == itemNS(4 * Self.second))
            #expect(play.issuedAt < peer.host(20_000))
        }
        // The record that settles the release tells nothing twice, and both hold the same group.
        let late = ordered(7, ben, at: 30_000, .endSuspension(id: stall, proposedTime: nil))
        for index in peers.indices {
            let before = peers[index].emitted.count
            peers[index].order(late, receivedAt: 30_010)
            #expect(!peers[index].emitted.dropFirst(before).contains { if case .holdExpired = $0.event { true } else { false } })
        }
        #expect(peers[0].machine.core == peers[1].machine.core)
        #expect(peers[0].machine.core.suspensions.isEmpty && peers[0].machine.core.timeline.anchorSessionTime == release)
    }

    @Test func aSnapshotPublishedWhileTheMachineLooksAheadToAReleaseIsOfTheStateApplied() throws {
        // The lowest identity publishes; a quiet session, a minute after the first records.
        let low = UUID(uuidString: "00000000-0000-0000-0000-000000000001")!
        var machine = CoordinatorMachine(localParticipant: low, waitsForPreroll: false)
        _ = machine.onClockMapping(ClockMapping(session: sessionNS(Self.offset), host: .zero, sessionSecondsPerHostSecond: 1), now: .zero)
        let records = [ordered(1, low, at: 0, .state(item: "film", identity: "d=600.000;h=aa", ready: true)),
                       ordered(2, ben, at: 0, .state(item: "film", identity: "d=600.000;h=aa", ready: true)),
                       ordered(3, low, at: 0, .transition(item: "film", at: .zero)),
                       ordered(4, low, at: 1_000, .setRate(1)),
                       ordered(5, ben, at: 50_000, Self.begin(stall))]
        for record in records { _ = machine.onOrdered(.proposal(record), now: hostNS((record.orderedAt.nanoseconds - Self.offset) + 20 * Self.ms)) }
        // Half a second before Ben's hold ends at 65 s: the machine decides on the group as released.
        let tick = machine.onTick(now: hostNS(64_500 * Self.ms))
        let snapshot = try #require(tick.compactMap { if case .publishSnapshot(let snapshot) = $0 { snapshot } else { nil } }.first)
        #expect(snapshot.core == machine.core)
        #expect(snapshot.core.isWaiting, "the release is not applied until a record settles it")
        #expect(tick.contains { if case .issue(let issued) = $0, case .play = issued.command { true } else { false } })
    }

    @Test func theSuspendedParticipantIsToldAtTheInstantTooAndItsPlayerIsNotDriven() throws {
        var benPeer = Peer(ben, skew: 0)
        let records = history(at: [])
        for record in records { benPeer.order(record, receivedAt: (record.orderedAt.nanoseconds - Self.offset) / Self.ms + 20) }
        _ = benPeer.machine.onSuspensionBegan(stall, reason: .stallRecovery, now: benPeer.host(5_000))
        let playsBefore = benPeer.plays.count
        benPeer.order(ordered(6, ben, at: 5_000, Self.begin(stall)), receivedAt: 5_020)
        benPeer.runUntil(benPeer.host(25_000))
        let expired = benPeer.emitted.filter { if case .holdExpired = $0.event { true } else { false } }
        try #require(expired.count == 1)
        let told = benPeer.machine.mapping!.sessionTime(atHost: expired[0].at)
        #expect(told >= session(20_000) && told - session(20_000) < .milliseconds(1))
        #expect(benPeer.plays.count == playsBefore, "a suspended player is its own")
    }
}

extension PlaybackProposal {
    /// Whether this is one of Ben's proposals in the tests' histories (his suspension's begin or end).
    fileprivate var isBen: Bool {
        switch self {
        case .beginSuspension, .endSuspension: true
        default: false
        }
    }
}
