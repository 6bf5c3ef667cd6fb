import Foundation
import Testing
import TandemClock
@testable import TandemPlayback

/// Waiting together in the pure core: ordered records in, one timeline out (the pre-roll gate,
/// the stall policy, the group's identity), the same on every participant.
@Suite struct WaitingCoreTests {
    static let second: Int64 = 1_000_000_000
    static let ms: Int64 = 1_000_000
    let ana = UUID()
    let ben = UUID()
    let cleo = UUID()

    /// Ordered at session `at` ms, effective `lead` ms later.
    func ordered(_ order: UInt64, _ who: UUID, at: Int64, lead: Int64 = 50, _ proposal: PlaybackProposal) -> OrderedProposal {
        OrderedProposal(originator: who, order: order, orderedAt: sessionNS(at * Self.ms), effectiveAt: sessionNS((at + lead) * Self.ms),
                        proposal: proposal)
    }

    /// A core where `who` reported the film (same identity) and Ana chose it, paused at 0.
    func core(with who: [UUID]) -> (CoordinationCore, UInt64) {
        var core = CoordinationCore(waitsForPreroll: true)
        var order: UInt64 = 0
        for participant in who {
            order += 1
            _ = core.apply(ordered(order, participant, at: 0, .state(item: "film", identity: "d=60.000;h=aa", ready: true)))
        }
        order += 1
        _ = core.apply(ordered(order, ana, at: 0, .transition(item: "film", at: 0)))
        return (core, order)
    }

    @Test func aGroupOfOnePlaysAtOnce() {
        var (core, order) = core(with: [ana])
        _ = core.apply(ordered(order + 1, ana, at: 1_000, .setRate(1)))
        #expect(core.waiting.gate == nil)
        #expect(core.timeline.rate == 1)
        #expect(core.timeline.anchorSessionTime == sessionNS(1_050 * Self.ms))
    }

    /// Issue 13, item 3: a play waits for the others' pre-roll unless asked not to.
    @Test func theGateIsOnByDefault() {
        #expect(CoordinationCore().waitsForPreroll)
        #expect(CoordinatorMachine(localParticipant: ana).core.waitsForPreroll)
        #expect(PlaybackCoordinator().waitsForPreroll)
        // And a default core opens one for a play of two.
        var core = CoordinationCore()
        for (order, who) in [ana, ben].enumerated() {
            _ = core.apply(ordered(UInt64(order + 1), who, at: 0, .state(item: "film", identity: "d=60.000;h=aa", ready: true)))
        }
        _ = core.apply(ordered(3, ana, at: 0, .transition(item: "film", at: 0)))
        _ = core.apply(ordered(4, ana, at: 1_000, .setRate(1)))
        #expect(core.waiting.gate?.pending == [ana, ben])
    }

    /// The ungated path, asked for explicitly (`waitsForPreroll: false`).
    @Test func withoutTheGateAPlayTakesEffectAtItsInstant() {
        var core = CoordinationCore(waitsForPreroll: false)
        #expect(!core.waitsForPreroll)
        for (order, who) in [ana, ben].enumerated() {
            _ = core.apply(ordered(UInt64(order + 1), who, at: 0, .state(item: "film", identity: "d=60.000;h=aa", ready: true)))
        }
        _ = core.apply(ordered(3, ana, at: 0, .transition(item: "film", at: 0)))
        _ = core.apply(ordered(4, ana, at: 1_000, .setRate(1)))
        #expect(core.waiting.gate == nil)
        #expect(core.timeline.anchorSessionTime == sessionNS(1_050 * Self.ms))
    }

    @Test func aPlayWaitsForEveryoneToPrerollThenStartsAtTheLatestReport() throws {
        var (core, order) = core(with: [ana, ben, cleo])
        _ = core.apply(ordered(order + 1, ana, at: 1_000, .setRate(1)))
        let gate = try #require(core.waiting.gate)
        #expect(gate.expected == [ana, ben, cleo])
        #expect(gate.version == order + 1)
        // Until the reports, the play is ordered for the deadline: 1 s after it was ordered.
        #expect(core.timeline.anchorSessionTime == sessionNS(2_000 * Self.ms))
        #expect(core.timeline.rate == 1)
        #expect(core.apply(ordered(order + 2, ana, at: 1_100, .prerolled(version: order + 1))).isEmpty)
        #expect(core.apply(ordered(order + 3, cleo, at: 1_150, .prerolled(version: order + 1))).isEmpty)
        // A report for another play counts for nothing.
        #expect(core.apply(ordered(order + 4, ben, at: 1_200, .prerolled(version: order))).isEmpty)
        #expect(core.waiting.gate?.pending == [ben])
        let events = core.apply(ordered(order + 5, ben, at: 1_300, .prerolled(version: order + 1)))
        #expect(core.waiting.gate == nil)
        #expect(core.timeline.anchorSessionTime == sessionNS(1_350 * Self.ms))
        #expect(core.timeline.anchorMediaTime == .zero)
        #expect(events == [.timelineChanged(core.timeline, originator: ben, proposal: .prerolled(version: order + 1))])
    }

    @Test func aSlowParticipantIsWaitedForAtMostOneSecondThenCatchesUpAlone() throws {
        var (core, order) = core(with: [ana, ben])
        _ = core.apply(ordered(order + 1, ana, at: 1_000, .setRate(1)))
        _ = core.apply(ordered(order + 2, ana, at: 1_100, .prerolled(version: order + 1)))
        // Ben's report comes after the deadline: the play had started at it.
        let late = core.apply(ordered(order + 3, ben, at: 2_100, .prerolled(version: order + 1)))
        #expect(late.isEmpty)
        #expect(core.waiting.gate == nil)
        #expect(core.timeline.anchorSessionTime == sessionNS(2_000 * Self.ms))
        #expect(core.timeline.mediaTime(atSessionTime: sessionNS(3_000 * Self.ms)) == itemNS(1 * Self.second))
    }

    @Test func playImmediatelyAndResumeImmediatelySkipTheGate() {
        var (core, order) = core(with: [ana, ben])
        _ = core.apply(ordered(order + 1, ana, at: 1_000, .setRateImmediately(1)))
        #expect(core.waiting.gate == nil)
        #expect(core.timeline.anchorSessionTime == sessionNS(1_050 * Self.ms))
        _ = core.apply(ordered(order + 2, ben, at: 2_000, .seekImmediately(to: itemNS(10 * Self.second))))
        #expect(core.waiting.gate == nil)
        #expect(core.timeline.anchorSessionTime == sessionNS(2_050 * Self.ms))
        // A plain seek while playing waits for pre-roll.
        _ = core.apply(ordered(order + 3, ben, at: 3_000, .seek(to: itemNS(20 * Self.second))))
        #expect(core.waiting.gate?.version == order + 3)
        #expect(core.timeline.anchorSessionTime == sessionNS(4_000 * Self.ms))
        #expect(core.timeline.anchorMediaTime == itemNS(20 * Self.second))
    }

    @Test func aDepartureOrAnUnheldSuspensionStopsTheGateWaitingForThatParticipant() {
        var (core, order) = core(with: [ana, ben, cleo])
        _ = core.apply(ordered(order + 1, ana, at: 1_000, .setRate(1)))
        _ = core.apply(ordered(order + 2, ana, at: 1_100, .prerolled(version: order + 1)))
        _ = core.apply(ordered(order + 3, ben, at: 1_200, .beginSuspension(id: UUID(), reason: .userActionRequired,
                                                                       triggersWaiting: false, waitingLimit: nil)))
        #expect(core.waiting.gate?.pending == [cleo])
        _ = core.apply(ordered(order + 4, ana, at: 1_300, .departed(cleo)))
        #expect(core.waiting.gate == nil)
        #expect(core.timeline.anchorSessionTime == sessionNS(1_350 * Self.ms))
        #expect(core.timeline.rate == 1)
    }

    @Test func aPauseDuringTheGateWithdrawsThePlay() {
        var (core, order) = core(with: [ana, ben])
        _ = core.apply(ordered(order + 1, ana, at: 1_000, .setRate(1)))
        _ = core.apply(ordered(order + 2, ben, at: 1_200, .pause(at: nil)))
        #expect(core.waiting.gate == nil)
        #expect(core.timeline.rate == 0)
        #expect(core.timeline.anchorMediaTime == .zero)
        #expect(core.timeline.anchorSessionTime == sessionNS(1_250 * Self.ms))
    }

    @Test func aResumeAfterWaitingWaitsForPreroll() {
        var (core, order) = core(with: [ana, ben])
        _ = core.apply(ordered(order + 1, ana, at: 1_000, .setRateImmediately(1)))
        let stall = UUID()
        _ = core.apply(ordered(order + 2, ben, at: 5_000, .beginSuspension(id: stall, reason: .stallRecovery,
                                                                       triggersWaiting: true, waitingLimit: nil)))
        #expect(core.isWaiting)
        let events = core.apply(ordered(order + 3, ben, at: 6_000, .endSuspension(id: stall, proposedTime: nil)))
        #expect(events.count == 1)
        #expect(core.waiting.gate?.version == order + 3)
        #expect(core.timeline.anchorSessionTime == sessionNS(7_000 * Self.ms))
    }

    @Test func aParticipantStallingMoreThanThreeTimesAMinuteStopsHoldingTheGroup() {
        var (core, order) = core(with: [ana, ben])
        _ = core.apply(ordered(order + 1, ana, at: 1_000, .setRateImmediately(1)))
        order += 1
        var holds: [Bool] = []
        for index in 0..<5 {
            let id = UUID()
            order += 1
            _ = core.apply(ordered(order, ben, at: Int64(2_000 + index * 10_000), .beginSuspension(id: id, reason: .stallRecovery,
                                                                                               triggersWaiting: true, waitingLimit: nil)))
            holds.append(core.suspensions.last?.holdsGroup ?? false)
            order += 1
            _ = core.apply(ordered(order, ben, at: Int64(3_000 + index * 10_000), .endSuspension(id: id, proposedTime: nil)))
        }
        #expect(holds == [true, true, true, false, false])
        // A minute after the first stalls, they have thinned out: the next holds again.
        order += 1
        _ = core.apply(ordered(order, ben, at: 100_000, .beginSuspension(id: UUID(), reason: .stallRecovery,
                                                                     triggersWaiting: true, waitingLimit: nil)))
        #expect(core.suspensions.last?.holdsGroup == true)
        // Another reason is not counted.
        #expect(core.waiting.stalls.recentStalls(of: ana, at: sessionNS(100_000 * Self.ms)) == 0)
    }

    @Test func aMismatchedParticipantNeverHoldsTheGroupWhateverItsReasons() {
        var (core, order) = core(with: [ana, ben])
        // Cleo has another file under the same identifier: the first identity reported is the group's.
        _ = core.apply(ordered(order + 1, cleo, at: 500, .state(item: "film", identity: "d=61.000;h=bb", ready: true)))
        #expect(core.isMismatched(cleo))
        #expect(!core.isMismatched(ben))
        #expect(core.waiting.groupIdentities == ["film": "d=60.000;h=aa"])
        _ = core.apply(ordered(order + 2, cleo, at: 600, .beginSuspension(id: UUID(), reason: .stallRecovery,
                                                                      triggersWaiting: true, waitingLimit: nil)))
        #expect(!core.isWaiting)
        // The gate does not wait for it either.
        _ = core.apply(ordered(order + 3, ana, at: 1_000, .setRate(1)))
        #expect(core.waiting.gate?.expected == [ana, ben])
    }

    @Test func aParticipantFoundMismatchedWhileHoldingTheGroupReleasesIt() {
        var (core, order) = core(with: [ana, ben])
        _ = core.apply(ordered(order + 1, ana, at: 1_000, .setRateImmediately(1)))
        _ = core.apply(ordered(order + 2, cleo, at: 2_000, .beginSuspension(id: UUID(), reason: .coordinatedPlaybackNotPossible,
                                                                        triggersWaiting: true, waitingLimit: nil)))
        #expect(core.isWaiting)
        let events = core.apply(ordered(order + 3, cleo, at: 3_000, .state(item: "film", identity: "d=61.000;h=bb", ready: true)))
        #expect(!core.isWaiting)
        #expect(events.contains { if case .groupResumed = $0 { true } else { false } })
        #expect(events.contains { if case .itemMismatch = $0 { true } else { false } })
    }

    @Test func everyParticipantHoldsTheSameGateAndStartAfterTheSameRecords() {
        let (start, order) = core(with: [ana, ben, cleo])
        let records = [
            ordered(order + 1, ben, at: 1_000, .setRate(1)),
            ordered(order + 2, cleo, at: 1_020, .prerolled(version: order + 1)),
            ordered(order + 3, ana, at: 1_040, .beginSuspension(id: UUID(), reason: .stallRecovery, triggersWaiting: false, waitingLimit: nil)),
            ordered(order + 4, ben, at: 1_300, .prerolled(version: order + 1)),
        ]
        var first = start
        var second = start
        for record in records { _ = first.apply(record) }
        for record in records { _ = second.apply(record) }
        _ = second.apply(records[1])
        #expect(first == second)
        #expect(first.timeline.anchorSessionTime == sessionNS(1_350 * Self.ms))
    }

    @Test func theGroupIdentitiesAreBoundedByWhatIsHeld() {
        var core = CoordinationCore()
        for index in 0..<50 {
            _ = core.apply(ordered(UInt64(index + 1), ana, at: Int64(index), .state(item: "item \(index)", identity: "h=\(index)", ready: true)))
        }
        // The first report chose the group's item (the queue's first entry), which the timeline
        // holds; of the others only what a participant holds now is kept.
        #expect(core.timeline.item == "item 0")
        #expect(core.waiting.groupIdentities == ["item 0": "h=0", "item 49": "h=49"])
    }
}
