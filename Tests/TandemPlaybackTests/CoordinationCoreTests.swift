import Foundation
import Testing
import TandemPlayback

/// The coordinator's pure core: ordered proposals in, one timeline out, the same everywhere.
@Suite struct CoordinationCoreTests {
    let ana = UUID()
    let ben = UUID()
    let second: Int64 = 1_000_000_000

    func ordered(_ order: UInt64, _ who: UUID, at: Int64, _ proposal: PlaybackProposal) -> OrderedProposal {
        OrderedProposal(originator: who, order: order, effectiveAt: sessionNS(at), proposal: proposal)
    }

    @Test func playPauseSeekAndRateTakeEffectAtTheirInstants() {
        var core = CoordinationCore()
        _ = core.apply(ordered(1, ana, at: 10 * second, .transition(item: "film", at: 0)))
        _ = core.apply(ordered(2, ana, at: 11 * second, .setRate(1)))
        #expect(core.timeline.mediaTime(atSessionTime: sessionNS(13 * second)) == itemNS(2 * second))
        _ = core.apply(ordered(3, ben, at: 13 * second, .setRate(2)))
        #expect(core.timeline.anchorMediaTime == itemNS(2 * second))
        #expect(core.timeline.mediaTime(atSessionTime: sessionNS(14 * second)) == itemNS(4 * second))
        let events = core.apply(ordered(4, ben, at: 14 * second, .pause(at: nil)))
        #expect(core.timeline.rate == 0)
        #expect(core.timeline.anchorMediaTime == itemNS(4 * second))
        #expect(core.timeline.version == 4)
        #expect(events == [.timelineChanged(core.timeline, originator: ben, proposal: .pause(at: nil))])
        _ = core.apply(ordered(5, ana, at: 15 * second, .seek(to: itemNS(60 * second))))
        #expect(core.timeline.anchorMediaTime == itemNS(60 * second))
        #expect(core.timeline.rate == 0)
    }

    @Test func pauseSnapsToTheOriginatorsPositionWhenAsked() {
        var snapping = CoordinationCore()
        var exact = CoordinationCore(pauseSnapsToMediaTimeOfOriginator: false)
        for index in [0, 1] {
            var core = index == 0 ? snapping : exact
            _ = core.apply(ordered(1, ana, at: 0, .setRate(1)))
            _ = core.apply(ordered(2, ben, at: 5 * second, .pause(at: 4_900_000_000)))
            if index == 0 { snapping = core } else { exact = core }
        }
        #expect(snapping.timeline.anchorMediaTime == 4_900_000_000)
        #expect(exact.timeline.anchorMediaTime == itemNS(5 * second))
    }

    @Test func concurrentProposalsConvergeInRelayOrder() {
        // Ana and Ben propose at once; the relay orders Ben's first. Every participant applies
        // the same sequence, so all end on the same timeline whatever each proposed.
        let sequence = [
            ordered(1, ana, at: 0, .setRate(1)),
            ordered(2, ben, at: 2 * second, .seek(to: itemNS(30 * second))),
            ordered(3, ana, at: 2 * second, .pause(at: nil)),
            ordered(4, ben, at: 2 * second + 1, .setRate(1.5)),
        ]
        var first = CoordinationCore()
        var second = CoordinationCore()
        for proposal in sequence { _ = first.apply(proposal) }
        // A replay of what was applied changes nothing.
        for proposal in sequence + sequence { _ = second.apply(proposal) }
        #expect(first == second)
        #expect(first.timeline.anchorMediaTime == itemNS(30 * self.second))
        #expect(first.timeline.rate == 1.5)
    }

    @Test func groupWaitsForASuspensionAndResumesWhenTheLastEnds() {
        var core = CoordinationCore()
        _ = core.apply(ordered(1, ana, at: 0, .setRate(1)))
        let stall = UUID()
        let waiting = core.apply(ordered(2, ben, at: 3 * second, .beginSuspension(id: stall, reason: .stallRecovery, triggersWaiting: true, waitingLimit: nil)))
        #expect(core.isWaiting)
        #expect(core.timeline.rate == 0)
        #expect(core.timeline.anchorMediaTime == itemNS(3 * second))
        if case .groupWaiting(_, let suspensions) = waiting.first {
            #expect(suspensions.map(\.participant) == [ben])
        } else {
            Issue.record("no groupWaiting event: \(waiting)")
        }
        // A rate change while waiting is remembered, not applied.
        _ = core.apply(ordered(3, ana, at: 4 * second, .setRate(2)))
        #expect(core.timeline.rate == 0)
        let resumed = core.apply(ordered(4, ben, at: 6 * second, .endSuspension(id: stall, proposedTime: nil)))
        #expect(!core.isWaiting)
        #expect(core.timeline.rate == 2)
        #expect(core.timeline.anchorMediaTime == itemNS(3 * second))
        #expect(core.timeline.anchorSessionTime == sessionNS(6 * second))
        #expect(resumed == [.groupResumed(core.timeline, originator: ben)])
    }

    @Test func participantLimitLetsOthersCatchUpOnTheirOwn() {
        var core = CoordinationCore()
        _ = core.apply(ordered(1, ana, at: 0, .setRate(1)))
        let first = UUID()
        let other = UUID()
        _ = core.apply(ordered(2, ana, at: second(1), .beginSuspension(id: first, reason: .stallRecovery, triggersWaiting: true, waitingLimit: 1)))
        _ = core.apply(ordered(3, ben, at: second(2), .beginSuspension(id: other, reason: .stallRecovery, triggersWaiting: true, waitingLimit: 1)))
        #expect(core.suspensions.map(\.holdsGroup) == [true, false])
        // When the one holding the group ends, playback resumes though Ben is still stalled.
        _ = core.apply(ordered(4, ana, at: second(3), .endSuspension(id: first, proposedTime: nil)))
        #expect(!core.isWaiting)
        #expect(core.timeline.rate == 1)
        // A suspension that does not ask to wait never pauses anyone.
        _ = core.apply(ordered(5, ana, at: second(4), .beginSuspension(id: UUID(), reason: .userActionRequired, triggersWaiting: false, waitingLimit: nil)))
        #expect(core.timeline.rate == 1)
    }

    @Test func departureEndsTheDepartedParticipantsSuspensions() {
        var core = CoordinationCore()
        _ = core.apply(ordered(1, ana, at: 0, .setRate(1)))
        _ = core.apply(ordered(2, ben, at: second(1), .beginSuspension(id: UUID(), reason: .stallRecovery, triggersWaiting: true, waitingLimit: nil)))
        #expect(core.isWaiting)
        _ = core.apply(ordered(3, ana, at: second(2), .departed(ben)))
        #expect(!core.isWaiting)
        #expect(core.timeline.rate == 1)
        // Noticed twice: the second changes nothing but the version.
        let again = core.apply(ordered(4, ana, at: second(3), .departed(ben)))
        #expect(again.isEmpty)
    }

    @Test func differentContentUnderOneItemIsReported() {
        var core = CoordinationCore()
        _ = core.apply(ordered(1, ana, at: 0, .transition(item: "film.mp4", at: 0)))
        #expect(core.apply(ordered(2, ana, at: 0, .state(item: "film.mp4", identity: "d=4.0;h=aa", ready: true))).isEmpty)
        let events = core.apply(ordered(3, ben, at: 0, .state(item: "film.mp4", identity: "d=4.0;h=bb", ready: true)))
        #expect(events == [.itemMismatch(item: "film.mp4", identities: [ana: "d=4.0;h=aa", ben: "d=4.0;h=bb"])])
    }

    @Test func anEarlierEffectiveTimeNeverMovesTheAnchorBack() {
        var core = CoordinationCore()
        _ = core.apply(ordered(1, ana, at: 10 * second, .setRate(1)))
        _ = core.apply(ordered(2, ben, at: 9 * second, .pause(at: nil)))
        #expect(core.timeline.anchorSessionTime == sessionNS(10 * second))
    }

    func second(_ count: Int64) -> Int64 { count * 1_000_000_000 }
}
