import Foundation
import Testing
import TandemClock
@testable import TandemPlayback

/// The shared queue in the replicated core: queue changes, the end of an item without a
/// proposal, and the older item proposals keeping the queue the item's source of truth.
@Suite struct QueueCoreTests {
    static let second: Int64 = 1_000_000_000
    static let ms: Int64 = 1_000_000
    let ana = UUID()
    let ben = UUID()
    let first = PlaybackQueue.Entry(identifier: "first.mp4", identity: "d=10.000;h=aa", duration: .seconds(10))
    let second = PlaybackQueue.Entry(identifier: "second.mp4", identity: "d=5.000;h=bb", duration: .seconds(5))

    func ordered(_ order: UInt64, _ who: UUID, at: Int64, _ proposal: PlaybackProposal) -> OrderedProposal {
        OrderedProposal(originator: who, order: order, effectiveAt: sessionNS(at), proposal: proposal)
    }

    /// A core whose queue holds `first` then `second`, playing `first` from session 1 s.
    func playing() -> CoordinationCore {
        var core = CoordinationCore()
        _ = core.apply(ordered(1, ana, at: 0, .queue(.append(first))))
        _ = core.apply(ordered(2, ben, at: 0, .queue(.append(second))))
        _ = core.apply(ordered(3, ana, at: 1 * Self.second, .setRate(1)))
        return core
    }

    @Test func theTimelinesItemIsTheQueuesCurrentEntry() {
        var core = playing()
        #expect(core.timeline.item == "first.mp4" && core.queue.currentID == first.id && core.currentEntryIndex == 0)
        // `next` switches the group to the next entry from its start, at the record's instant, playing on.
        let events = core.apply(ordered(4, ben, at: 3 * Self.second, .queue(.next)))
        #expect(core.timeline.item == "second.mp4" && core.currentEntryIndex == 1)
        #expect(core.timeline.anchorMediaTime == .zero && core.timeline.anchorSessionTime == sessionNS(3 * Self.second))
        #expect(core.timeline.rate == 1 && core.timeline.version == 4)
        #expect(events == [.timelineChanged(core.timeline, originator: ben, proposal: .queue(.next))])
        // `previous` goes back; a change elsewhere in the queue leaves the timeline where it was.
        _ = core.apply(ordered(5, ana, at: 4 * Self.second, .queue(.previous)))
        #expect(core.timeline.item == "first.mp4" && core.timeline.anchorMediaTime == .zero)
        let before = core.timeline
        _ = core.apply(ordered(6, ana, at: 5 * Self.second, .queue(.move(second.id, after: nil))))
        #expect(core.queue.entries.map(\.id) == [second.id, first.id])
        #expect(core.timeline.item == before.item && core.timeline.anchorSessionTime == before.anchorSessionTime)
        // Removing the current entry moves to the next one (none after it: the previous).
        _ = core.apply(ordered(7, ana, at: 6 * Self.second, .queue(.remove(first.id))))
        #expect(core.timeline.item == "second.mp4" && core.timeline.anchorMediaTime == .zero)
        // Removing the last leaves no item, paused.
        _ = core.apply(ordered(8, ana, at: 7 * Self.second, .queue(.remove(second.id))))
        #expect(core.timeline.item == nil && core.timeline.rate == 0 && core.queue.isEmpty)
    }

    @Test func theEndOfAnItemAdvancesAtItsInstantWithoutAProposal() {
        let core = playing()
        // The first ends at session 11 s (played from 1 s, 10 s long).
        #expect(core.currentItemEndInstant == sessionNS(11 * Self.second))
        #expect(core.settled(at: sessionNS(11 * Self.second - 1)).timeline == core.timeline)
        let advanced = core.settled(at: sessionNS(11 * Self.second))
        #expect(advanced.timeline.item == "second.mp4" && advanced.timeline.anchorMediaTime == .zero)
        #expect(advanced.timeline.anchorSessionTime == sessionNS(11 * Self.second) && advanced.timeline.rate == 1)
        #expect(advanced.timeline.version == core.timeline.version)
        // At the end of the last item the group pauses on its last frame, at that item's end.
        var ended = core
        let events = ended.settle(at: sessionNS(100 * Self.second))
        #expect(ended.timeline.item == "second.mp4" && ended.timeline.rate == 0 && ended.intendedRate == 0)
        #expect(ended.timeline.anchorMediaTime == itemNS(5 * Self.second) && ended.timeline.anchorSessionTime == sessionNS(16 * Self.second))
        #expect(events.count == 2)
        if case .itemEnded(_, let next, let index)? = events.first { #expect(next == second && index == 1) } else { Issue.record("\(events)") }
        if case .itemEnded(_, let next, _)? = events.last { #expect(next == nil) } else { Issue.record("\(events)") }
        // Reading ahead changes nothing of the replicated core.
        #expect(core.timeline.item == "first.mp4")
    }

    @Test func aRecordAppliesTheEndsDueBeforeItFirstSoThatReadingAheadCannotChangeIt() {
        // Two participants: one reads ahead (settled views), the other never does; a seek
        // effective at 12 s lands on the second item for both.
        let reader = playing()
        _ = reader.settled(at: sessionNS(30 * Self.second))
        var a = reader
        var b = playing()
        let record = ordered(4, ben, at: 12 * Self.second, .seek(to: itemNS(2 * Self.second)))
        let eventsA = a.apply(record)
        _ = b.apply(record)
        #expect(a == b)
        #expect(a.timeline.item == "second.mp4" && a.timeline.anchorMediaTime == itemNS(2 * Self.second) && a.timeline.rate == 1)
        #expect(eventsA.count == 2)
        if case .itemEnded? = eventsA.first {} else { Issue.record("the end comes first: \(eventsA)") }
        // Nothing is settled for a record whose instants are refused.
        var c = playing()
        let poisoned = OrderedProposal(originator: ben, order: 4, orderedAt: sessionNS(2 * Self.second), effectiveAt: sessionNS(3_600 * Self.second),
                                       proposal: .setRate(1))
        let events = c.apply(poisoned)
        #expect(events.count == 1 && c.timeline.item == "first.mp4" && c.timeline.version == 4)
    }

    /// A proposal as an older peer sent it (`json`, naming no item), decoded and applied by Ben
    /// at session 11.5 s, just after the first item's end; with the core after it.
    func appliedAfterTheEnd(_ json: String) throws -> (PlaybackProposal, CoordinationCore) {
        let proposal = try JSONDecoder().decode(PlaybackProposal.self, from: Data(json.utf8))
        var core = playing()
        _ = core.apply(ordered(4, ben, at: 11_500 * Self.ms, proposal))
        return (proposal, core)
    }

    /// A pause (or a scrub's end) proposed on the first item, whose record takes effect after the
    /// first item's end: the position belongs to the first item, so the group pauses (or resumes)
    /// where it is on the second, not at 9.8 s of a 5 s clip. On the item it was made in, the
    /// pause snaps as ever; a pause naming no item (made before pauses named one) snaps too.
    @Test func aPauseMadeBeforeAnEndAndAppliedAfterItPausesTheNextItemWhereItIs() throws {
        // The first ends at session 11 s; the record takes effect at 11.5 s.
        var late = playing()
        let events = late.apply(ordered(4, ben, at: 11_500 * Self.ms, .pause(at: itemNS(9_800 * Self.ms), item: "first.mp4")))
        #expect(late.timeline.item == "second.mp4" && late.timeline.rate == 0)
        #expect(late.timeline.anchorMediaTime == itemNS(500 * Self.ms), "\(late.timeline)")
        #expect(!events.contains { if case .proposalRejected = $0 { true } else { false } }, "\(events)")
        // On the item it was made in, it snaps to the originator's position.
        var inItem = playing()
        _ = inItem.apply(ordered(4, ben, at: 9_900 * Self.ms, .pause(at: itemNS(8_800 * Self.ms), item: "first.mp4")))
        #expect(inItem.timeline.item == "first.mp4" && inItem.timeline.anchorMediaTime == itemNS(8_800 * Self.ms))
        // A pause as peers sent it before pauses named an item reads as one naming none.
        let (older, unnamed) = try appliedAfterTheEnd(#"{"pause":{"at":300000000}}"#)
        #expect(older == .pause(at: itemNS(300 * Self.ms), item: nil))
        #expect(unnamed.timeline.item == "second.mp4" && unnamed.timeline.anchorMediaTime == itemNS(300 * Self.ms))
        // A scrub's end proposing a time in the first item, after its end: the suspension ends,
        // and the group stays where it is on the second.
        var scrubbed = playing()
        let scrub = UUID()
        _ = scrubbed.apply(ordered(4, ben, at: 9 * Self.second,
                                   .beginSuspension(id: scrub, reason: .userIsChangingCurrentTime, triggersWaiting: false, waitingLimit: nil)))
        _ = scrubbed.apply(ordered(5, ben, at: 12 * Self.second, .endSuspension(id: scrub, proposedTime: itemNS(9_500 * Self.ms), item: "first.mp4")))
        #expect(scrubbed.suspensions.isEmpty)
        #expect(scrubbed.timeline.item == "second.mp4" && scrubbed.timeline.rate == 1)
        #expect(scrubbed.timeline.mediaTime(atSessionTime: sessionNS(12 * Self.second)) == itemNS(1 * Self.second), "\(scrubbed.timeline)")
    }

    /// A seek made on the first item whose record takes effect on another: skipped when an end
    /// or another participant's switch moved the group (the time is the first item's), applied
    /// when the originator made the switch itself (it switched, then sought, before it saw its
    /// switch: the seek is meant for the new item). A seek naming no item moves whatever is
    /// current, as before seeks named one.
    @Test func aSeekMadeOnAnItemTheGroupHasLeftIsSkippedUnlessItsOriginatorSwitched() throws {
        // After the first item's end (session 11 s).
        var ended = playing()
        let events = ended.apply(ordered(4, ben, at: 11_500 * Self.ms, .seek(to: itemNS(2 * Self.second), item: "first.mp4")))
        #expect(ended.timeline.item == "second.mp4" && ended.timeline.version == 4 && ended.timeline.anchorMediaTime == .zero)
        #expect(events.contains { if case .proposalRejected(let rejection, ben, 4) = $0 { rejection.reason == .otherItem } else { false } },
                "\(events)")
        #expect(ended.itemChosenBy == nil, "an end chose the second item, not a participant")
        // After another participant's switch.
        var switched = playing()
        _ = switched.apply(ordered(4, ana, at: 3 * Self.second, .queue(.next)))
        #expect(switched.itemChosenBy == ana)
        let skipped = switched.apply(ordered(5, ben, at: 3_100 * Self.ms, .seekImmediately(to: itemNS(4 * Self.second), item: "first.mp4")))
        #expect(switched.timeline.anchorMediaTime == .zero && skipped.contains { if case .proposalRejected = $0 { true } else { false } })
        // After its own switch: the seek lands in the new item.
        var own = playing()
        _ = own.apply(ordered(4, ben, at: 3 * Self.second, .transition(item: "second.mp4", at: 0)))
        _ = own.apply(ordered(5, ben, at: 3_100 * Self.ms, .seek(to: itemNS(4 * Self.second), item: "first.mp4")))
        #expect(own.timeline.item == "second.mp4" && own.timeline.anchorMediaTime == itemNS(4 * Self.second))
        // Older peers' seeks name no item and move whatever is current.
        let (older, unnamed) = try appliedAfterTheEnd(#"{"seek":{"to":1000000000}}"#)
        #expect(older == .seek(to: itemNS(1 * Self.second), item: nil))
        #expect(unnamed.timeline.item == "second.mp4" && unnamed.timeline.anchorMediaTime == itemNS(1 * Self.second))
    }

    @Test func aPauseAtItemEndPausesOnTheLastFrameOfTheCurrentItem() {
        var core = playing()
        _ = core.apply(ordered(4, ana, at: 2 * Self.second, .queue(.setActionAtItemEnd(.pause))))
        let ended = core.settled(at: sessionNS(20 * Self.second))
        #expect(ended.timeline.item == "first.mp4" && ended.timeline.rate == 0)
        #expect(ended.timeline.anchorMediaTime == itemNS(10 * Self.second) && ended.timeline.anchorSessionTime == sessionNS(11 * Self.second))
        // `next` at the last entry pauses there too.
        var last = playing()
        _ = last.apply(ordered(4, ana, at: 2 * Self.second, .queue(.jump(to: second.id))))
        _ = last.apply(ordered(5, ana, at: 3 * Self.second, .queue(.next)))
        #expect(last.timeline.item == "second.mp4" && last.timeline.rate == 0 && last.timeline.anchorMediaTime == itemNS(5 * Self.second))
    }

    @Test func aTransitionAndTheFirstReportKeepTheQueueTheSourceOfTruth() {
        var core = CoordinationCore()
        // An empty queue takes the first reported item (its identity with it, no duration: no end) …
        _ = core.apply(ordered(1, ben, at: 0, .state(item: "film", identity: "d=60.000;h=aa", ready: true)))
        #expect(core.timeline.item == "film" && core.queue.entries.count == 1)
        #expect(core.queue.current?.duration == nil && core.queue.current?.identity == "d=60.000;h=aa")
        // … and the next report changes nothing of it.
        _ = core.apply(ordered(2, ana, at: 0, .state(item: "other", identity: "d=5.000;h=cc", ready: true)))
        #expect(core.timeline.item == "film" && core.queue.entries.count == 1)
        // A transition to an item the queue lacks replaces the current entry, with an id the same everywhere.
        _ = core.apply(ordered(3, ana, at: 0, .transition(item: "other", at: 0)))
        #expect(core.queue.entries.map(\.identifier) == ["other"] && core.timeline.item == "other")
        #expect(core.queue.current?.identity == "d=5.000;h=cc")
        var again = CoordinationCore()
        for order: UInt64 in 1...3 { _ = again.apply(ordered(order, order == 1 ? ben : ana, at: 0, order == 1
                ? .state(item: "film", identity: "d=60.000;h=aa", ready: true)
                : order == 2 ? .state(item: "other", identity: "d=5.000;h=cc", ready: true) : .transition(item: "other", at: 0))) }
        #expect(again == core)
        // A transition to an item the queue holds jumps to it.
        _ = core.apply(ordered(4, ana, at: 0, .queue(.append(first))))
        _ = core.apply(ordered(5, ana, at: 0, .transition(item: "first.mp4", at: 0)))
        #expect(core.queue.currentID == first.id && core.queue.entries.count == 2)
    }

    @Test func aBadQueueChangeIsSkippedWithAnEventAndTheQueueFitsInASnapshot() throws {
        var core = playing()
        let before = core
        let events = core.apply(ordered(4, ben, at: 2 * Self.second, .queue(.jump(to: UUID()))))
        guard case .proposalRejected(let rejection, _, 4)? = events.first else { Issue.record("\(events)"); return }
        #expect(rejection.reason == .unknownEntry && core.queue == before.queue && core.timeline.version == 4)
        // Fill the queue with the longest identifiers and identities until the byte budget refuses.
        var order: UInt64 = 5
        var refused: ProposalRejection?
        for index in 0..<1_000 where refused == nil {
            let entry = PlaybackQueue.Entry(identifier: String(repeating: "x", count: 1_000) + "\(index)",
                                            identity: String(repeating: "i", count: 256), duration: .seconds(1))
            refused = core.queueRejection(of: .append(entry))
            _ = core.apply(ordered(order, ana, at: 2 * Self.second, .queue(.append(entry))))
            order += 1
        }
        #expect(refused?.reason == .tooManyEntries)
        #expect(core.queueBytes <= CoordinationCore.maximumQueueBytes)
        // The queue, encoded, fits in one relay message (257 KiB) with room for the rest of a snapshot.
        let encoded = try JSONEncoder().encode(core.queue)
        #expect(encoded.count < 200 * 1024, "\(encoded.count) bytes")
    }
}
