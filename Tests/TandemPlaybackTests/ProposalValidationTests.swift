import Foundation
import Testing
import TandemClock
import TandemPlayback

/// Poisoned proposals against the pure core, on virtual time: each is skipped on every
/// participant alike, with one event, leaving the timeline where it was but for the version; a
/// late joiner replaying a history that holds them lands on the same core; nothing traps.
@Suite struct ProposalValidationTests {
    static let second: Int64 = 1_000_000_000
    static let ana = UUID()
    static let eve = UUID()

    /// A playing group: the film (announced as 4 s long by Ana) at rate 1 from session time 10 s.
    static let setup: [OrderedProposal] = [
        OrderedProposal(originator: ana, order: 1, orderedAt: sessionNS(9 * second), effectiveAt: sessionNS(9 * second + 50_000_000),
                        proposal: .state(item: "film", identity: "d=4.000;h=00000000000000aa", ready: true)),
        OrderedProposal(originator: ana, order: 2, orderedAt: sessionNS(9 * second + 100_000_000), effectiveAt: sessionNS(9 * second + 150_000_000),
                        proposal: .transition(item: "film", at: 0)),
        OrderedProposal(originator: ana, order: 3, orderedAt: sessionNS(9 * second + 950_000_000), effectiveAt: sessionNS(10 * second),
                        proposal: .setRate(1)),
    ]

    /// A poison from Eve, ordered 4 at session time 11 s and effective 50 ms later unless the
    /// case says otherwise, and the reason it is skipped for.
    struct Poison: Sendable, CustomTestStringConvertible {
        let name: String
        let proposal: PlaybackProposal
        var orderedAt: SessionInstant = sessionNS(11 * second)
        var effectiveAt: SessionInstant = sessionNS(11 * second + 50_000_000)
        let reason: ProposalRejection.Reason
        var testDescription: String { name }
    }

    static let poisons: [Poison] = [
        Poison(name: "rate 1e15", proposal: .setRate(1e15), reason: .rateOutOfRange),
        Poison(name: "rate NaN", proposal: .setRate(.nan), reason: .notFinite),
        Poison(name: "rate infinity", proposal: .setRate(.infinity), reason: .notFinite),
        Poison(name: "rate -infinity", proposal: .setRate(-.infinity), reason: .notFinite),
        Poison(name: "rate -1", proposal: .setRate(-1), reason: .rateOutOfRange),
        Poison(name: "rate 0.1", proposal: .setRate(0.1), reason: .rateOutOfRange),
        Poison(name: "rate 4.5", proposal: .setRate(4.5), reason: .rateOutOfRange),
        Poison(name: "rate Double.greatestFiniteMagnitude", proposal: .setRate(.greatestFiniteMagnitude), reason: .rateOutOfRange),
        Poison(name: "seek to Int64.max", proposal: .seek(to: .max), reason: .mediaTimeOutOfRange),
        Poison(name: "seek to -1 ns", proposal: .seek(to: -1), reason: .mediaTimeOutOfRange),
        Poison(name: "seek to Int64.min", proposal: .seek(to: .min), reason: .mediaTimeOutOfRange),
        Poison(name: "seek past the announced duration", proposal: .seek(to: itemNS(4 * second + 1)), reason: .mediaTimeOutOfRange),
        Poison(name: "pause at Int64.max", proposal: .pause(at: .max), reason: .mediaTimeOutOfRange),
        Poison(name: "transition to a start past the duration", proposal: .transition(item: "film", at: itemNS(5 * second)),
               reason: .mediaTimeOutOfRange),
        Poison(name: "transition to an unannounced item past 24 h", proposal: .transition(item: "other", at: itemNS(24 * 3_600 * second + 1)),
               reason: .mediaTimeOutOfRange),
        Poison(name: "transition to an empty item", proposal: .transition(item: "", at: 0), reason: .oversized),
        Poison(name: "transition to a 2 KiB item", proposal: .transition(item: String(repeating: "x", count: 2048), at: 0),
               reason: .oversized),
        Poison(name: "end of a suspension proposing Int64.min", proposal: .endSuspension(id: UUID(), proposedTime: .min),
               reason: .mediaTimeOutOfRange),
        Poison(name: "suspension with a negative waiting limit",
               proposal: .beginSuspension(id: UUID(), reason: .stallRecovery, triggersWaiting: true, waitingLimit: -1),
               reason: .waitingLimitOutOfRange),
        Poison(name: "suspension with a waiting limit of Int.max",
               proposal: .beginSuspension(id: UUID(), reason: .stallRecovery, triggersWaiting: true, waitingLimit: .max),
               reason: .waitingLimitOutOfRange),
        Poison(name: "suspension with a 1 KiB reason",
               proposal: .beginSuspension(id: UUID(), reason: SuspensionReason(rawValue: String(repeating: "r", count: 1024)),
                                          triggersWaiting: true, waitingLimit: nil),
               reason: .oversized),
        Poison(name: "a 1 KiB content identity", proposal: .state(item: "film", identity: String(repeating: "d", count: 1024), ready: true),
               reason: .oversized),
        Poison(name: "effective instant an hour after ordering", proposal: .setRate(2),
               effectiveAt: sessionNS(11 * second + 3_600 * second), reason: .effectiveInstantOutOfRange),
        Poison(name: "effective instant 2 s and 1 ns after ordering", proposal: .setRate(2),
               effectiveAt: sessionNS(13 * second + 1), reason: .effectiveInstantOutOfRange),
        Poison(name: "effective instant before ordering", proposal: .setRate(2),
               effectiveAt: sessionNS(11 * second - 1), reason: .effectiveInstantOutOfRange),
        Poison(name: "effective instant at the end of time", proposal: .setRate(2),
               effectiveAt: .max, reason: .effectiveInstantOutOfRange),
        Poison(name: "ordering instant at the start of time", proposal: .setRate(2),
               orderedAt: .min, effectiveAt: .max, reason: .effectiveInstantOutOfRange),
    ]

    static func ordered(_ poison: Poison, order: UInt64 = 4) -> OrderedProposal {
        OrderedProposal(originator: eve, order: order, orderedAt: poison.orderedAt, effectiveAt: poison.effectiveAt, proposal: poison.proposal)
    }

    static func playingCore() -> CoordinationCore {
        var core = CoordinationCore()
        for proposal in setup { _ = core.apply(proposal) }
        return core
    }

    @Test(arguments: poisons)
    func aPoisonedProposalIsSkippedWithAnEventAndChangesNothingButTheVersion(_ poison: Poison) {
        var core = Self.playingCore()
        let before = core
        let events = core.apply(Self.ordered(poison))
        #expect(events.count == 1)
        guard case .proposalRejected(let rejection, let originator, let order)? = events.first else {
            Issue.record("\(poison.name): no rejection but \(events)")
            return
        }
        #expect(rejection.reason == poison.reason, "\(poison.name): \(rejection)")
        #expect(!rejection.detail.isEmpty)
        #expect(originator == Self.eve && order == 4)
        // Nothing but the version moved: the timeline, the intended rate, suspensions, reports.
        var expected = before.timeline
        expected.version = 4
        #expect(core.timeline == expected)
        #expect(core.intendedRate == before.intendedRate)
        #expect(core.suspensions == before.suspensions)
        #expect(core.participants == before.participants)
        // The timeline still answers at any instant, without trapping.
        #expect(core.timeline.mediaTime(atSessionTime: sessionNS(12 * Self.second)) == itemNS(2 * Self.second))
        _ = core.timeline.mediaTime(atSessionTime: .max)
        _ = core.timeline.mediaTime(atSessionTime: .min)
        // And the group goes on: the next valid change applies as ever.
        let next = core.apply(OrderedProposal(originator: Self.ana, order: 5, orderedAt: sessionNS(12 * Self.second),
                                              effectiveAt: sessionNS(12 * Self.second + 50_000_000), proposal: .seek(to: itemNS(3 * Self.second))))
        #expect(next.count == 1)
        #expect(core.timeline.anchorMediaTime == itemNS(3 * Self.second) && core.timeline.version == 5 && core.timeline.rate == 1)
    }

    @Test func everyParticipantAndALateJoinerHoldTheSameCoreAfterEveryPoison() {
        // The whole poisoned history, interleaved with valid changes, as the relay ordered it.
        var history = Self.setup
        var order: UInt64 = 3
        for (index, poison) in Self.poisons.enumerated() {
            order += 1
            history.append(Self.ordered(poison, order: order))
            order += 1
            let change: PlaybackProposal = index.isMultiple(of: 2) ? .seek(to: itemNS(Int64(index) * 100_000_000)) : .setRate(index % 3 == 0 ? 2 : 1)
            history.append(OrderedProposal(originator: Self.ana, order: order, orderedAt: sessionNS(11 * Self.second + Int64(index) * Self.second),
                                           effectiveAt: sessionNS(11 * Self.second + Int64(index) * Self.second + 40_000_000), proposal: change))
        }
        // Three participants apply it as it comes, each checking after every record that all agree.
        var cores = [CoordinationCore(), CoordinationCore(), CoordinationCore()]
        var rejected = 0
        for record in history {
            let events = cores.indices.map { cores[$0].apply(record) }
            #expect(events.allSatisfy { $0 == events[0] })
            rejected += events[0].filter { if case .proposalRejected = $0 { true } else { false } }.count
            #expect(cores.allSatisfy { $0 == cores[0] })
            #expect(cores[0].timeline.version == record.order)
        }
        #expect(rejected == Self.poisons.count)
        // A late joiner gets the history at once, replays included, and lands on the same core.
        var late = CoordinationCore()
        for record in history + history { _ = late.apply(record) }
        #expect(late == cores[0])
        #expect(late.timeline.rate > 0 && (0...itemNS(4 * Self.second)).contains(late.timeline.anchorMediaTime))
    }

    @Test func aBodyThatIsNoProposalIsSkippedAsOneThatIsInvalid() {
        var core = Self.playingCore()
        let before = core.timeline
        let rejection = ProposalRejection(.unreadable, "a body of 3 bytes is no proposal this version understands")
        #expect(core.skip(order: 4, originator: Self.eve, rejection: rejection) == [.proposalRejected(rejection, originator: Self.eve, order: 4)])
        #expect(core.timeline.version == 4 && core.timeline.rate == before.rate && core.timeline.anchorMediaTime == before.anchorMediaTime)
        // A replay of it changes nothing.
        #expect(core.skip(order: 4, originator: Self.eve, rejection: rejection).isEmpty)
    }

    @Test func mediaTimesAreBoundedByTheLongestAnnouncedDurationOrADay() {
        var core = CoordinationCore()
        #expect(core.mediaTimeRange(ofItem: "film") == 0...itemNS(24 * 3_600 * Self.second))
        #expect(core.mediaTimeRange(ofItem: nil) == 0...itemNS(24 * 3_600 * Self.second))
        _ = core.apply(OrderedProposal(originator: Self.ana, order: 1, effectiveAt: 0, proposal: .state(item: "film", identity: "d=4.000;h=aa", ready: true)))
        _ = core.apply(OrderedProposal(originator: Self.eve, order: 2, effectiveAt: 0, proposal: .state(item: "film", identity: "d=6.500;h=bb", ready: true)))
        // Unknown durations (d=0 for a stream), nonsense and a year's worth are not believed.
        for (index, identity) in ["d=0.000;h=cc", "d=nan;h=dd", "d=1e300;h=ee", "h=ff", "d=-3;h=00"].enumerated() {
            _ = core.apply(OrderedProposal(originator: UUID(), order: UInt64(3 + index), effectiveAt: 0,
                                           proposal: .state(item: "film", identity: identity, ready: true)))
        }
        #expect(core.mediaTimeRange(ofItem: "film") == 0...6_500_000_000)
        #expect(core.mediaTimeRange(ofItem: "other") == 0...itemNS(24 * 3_600 * Self.second))
        #expect(CoordinationCore.announcedDuration(in: "d=4.000;h=aa") == spanNS(4 * Self.second))
        #expect(CoordinationCore.announcedDuration(in: "d=0.000;h=aa") == nil)
        #expect(CoordinationCore.announcedDuration(in: "d=inf") == nil)
    }

    @Test func suspensionsAndReportsAreBoundedPerParticipantAndInAll() {
        var core = Self.playingCore()
        var order: UInt64 = 3
        func begin(_ who: UUID) -> [CoordinationCore.Event] {
            order += 1
            return core.apply(OrderedProposal(originator: who, order: order, effectiveAt: sessionNS(10 * Self.second),
                                              proposal: .beginSuspension(id: UUID(), reason: .userActionRequired, triggersWaiting: false,
                                                                         waitingLimit: nil)))
        }
        for _ in 0..<CoordinationCore.maximumSuspensionsPerParticipant { #expect(begin(Self.eve).isEmpty) }
        let refused = begin(Self.eve)
        #expect(refused.count == 1 && refused.first.map { if case .proposalRejected(let rejection, _, _) = $0 { rejection.reason == .tooManySuspensions } else { false } } == true)
        #expect(core.suspensions.count == CoordinationCore.maximumSuspensionsPerParticipant)
        // Another participant may still suspend.
        #expect(begin(Self.ana).isEmpty)
        #expect(core.suspensions.count == CoordinationCore.maximumSuspensionsPerParticipant + 1)
        // Reports of what was loaded: one entry per participant, at most so many participants.
        for _ in core.participants.count..<CoordinationCore.maximumParticipants {
            order += 1
            _ = core.apply(OrderedProposal(originator: UUID(), order: order, effectiveAt: sessionNS(10 * Self.second),
                                           proposal: .state(item: "film", identity: nil, ready: true)))
        }
        #expect(core.participants.count == CoordinationCore.maximumParticipants)
        order += 1
        let newcomer = core.apply(OrderedProposal(originator: UUID(), order: order, effectiveAt: sessionNS(10 * Self.second),
                                                  proposal: .state(item: "film", identity: nil, ready: true)))
        #expect(newcomer.count == 1 && newcomer.first.map { if case .proposalRejected(let rejection, _, _) = $0 { rejection.reason == .tooManyParticipants } else { false } } == true)
        // One already known may report again.
        order += 1
        #expect(core.apply(OrderedProposal(originator: Self.ana, order: order, effectiveAt: sessionNS(10 * Self.second),
                                           proposal: .state(item: "film", identity: "d=4.000;h=aa", ready: false))).isEmpty)
        #expect(core.participants[Self.ana]?.ready == false)
    }

    @Test func validValuesAtTheBoundsAreApplied() {
        var core = Self.playingCore()
        let cases: [PlaybackProposal] = [.setRate(0.25), .setRate(4), .setRate(0), .seek(to: 0), .seek(to: itemNS(4 * Self.second)),
                                         .pause(at: itemNS(4 * Self.second)), .transition(item: "film", at: itemNS(4 * Self.second))]
        for (index, proposal) in cases.enumerated() {
            let order = UInt64(4 + index)
            let events = core.apply(OrderedProposal(originator: Self.ana, order: order, orderedAt: sessionNS(11 * Self.second),
                                                    effectiveAt: sessionNS(11 * Self.second) + CoordinationCore.maximumLead, proposal: proposal))
            #expect(!events.contains { if case .proposalRejected = $0 { true } else { false } }, "\(proposal): \(events)")
            #expect(core.timeline.version == order)
        }
        #expect(core.timeline.anchorMediaTime == itemNS(4 * Self.second))
    }
}
