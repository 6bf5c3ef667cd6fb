import Foundation
import Testing
import Tandem
import TandemClock
@testable import TandemPlayback

/// Past the end of an item the group has moved on, though the replicated core settles that only
/// at its next record: what a program reads of the coordinator (the expected position, the
/// group's item) is the group as it stands, not the item that ended. Before, a status line read
/// the ended item's timeline for as long as nobody proposed anything: "item 1 of 2" and a
/// position 14 s past the start of the item every player was showing.
@Suite struct ItemEndReadAheadIOTests {
    typealias Channel = CoordinatorExtremesIOTests.ScriptedChannel

    @Test func theExpectedPositionAndTheItemFollowTheQueueAcrossAnItemsEnd() {
        let scheduler = VirtualScheduler(now: hostNS(SystemClock().instant().nanoseconds))
        let coordinator = PlaybackCoordinator(delegate: CoordinatorExtremesIOTests.CommandLog(), scheduler: scheduler)
        let channel = Channel()
        coordinator.coordinate(over: channel)
        let ana = UUID()
        let first = PlaybackQueue.Entry(identifier: "first.mp4", identity: "d=10.000;h=aa", duration: .seconds(10))
        let second = PlaybackQueue.Entry(identifier: "second.mp4", identity: "d=5.000;h=bb", duration: .seconds(5))
        // The channel's session clock runs 1000 s behind the local one.
        let start = SessionInstant(nanoseconds: SystemClock().instant().nanoseconds - CoordinatorExtremesIOTests.TrappingClock.offset)
        let proposals: [PlaybackProposal] = [.queue(.append(first)), .queue(.append(second)), .setRate(1)]
        for (index, proposal) in proposals.enumerated() {
            channel.feed(.proposal(OrderedProposal(originator: ana, order: UInt64(index + 1), orderedAt: start, effectiveAt: start,
                                                   proposal: proposal)))
        }
        scheduler.run()
        #expect(coordinator.core.timeline.item == "first.mp4" && coordinator.core.timeline.rate == 1)
        func local(_ session: SessionInstant) -> LocalInstant { coordinator.localTime(atSessionTime: session)! }

        // 4 s in: the first item, 4 s from its start.
        #expect(coordinator.expectedItemTime(atLocalTime: local(start + .seconds(4))) == ItemTime(nanoseconds: 4_000_000_000))
        #expect(coordinator.core(at: start + .seconds(4)).currentEntryIndex == 0)
        // 12 s in, with no record since: the first ended at 10 s, so the group is 2 s into the second.
        let later = start + .seconds(12)
        #expect(coordinator.expectedItemTime(atLocalTime: local(later)) == ItemTime(nanoseconds: 2_000_000_000))
        #expect(coordinator.core(at: later).timeline.item == "second.mp4")
        #expect(coordinator.core(at: later).currentEntryIndex == 1)
        // 20 s in: the last item ended at 15 s; the group is paused on its last frame.
        let end = coordinator.core(at: start + .seconds(20))
        #expect(end.timeline.rate == 0 && end.timeline.item == "second.mp4")
        #expect(coordinator.expectedItemTime(atLocalTime: local(start + .seconds(20))) == ItemTime(nanoseconds: 5_000_000_000))
        // The replicated core itself is unchanged: it settles at its next record, as on every participant.
        #expect(coordinator.core.timeline.item == "first.mp4")
    }
}
