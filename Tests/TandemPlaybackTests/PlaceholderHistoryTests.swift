import Foundation
import Testing
import Tandem
import TandemClock
@testable import TandemPlayback
import TandemWire

/// Records that failed the session's checks reach the coordinator as placeholders: they count in
/// the ordered history and change nothing. A late joiner's history then has no gap an invitee
/// can make; a joiner still waiting for a usable snapshot judges each once; and a live
/// participant refuses a snapshot that is not the state it applied. Pure, on the machine.
@Suite struct PlaceholderHistoryTests {
    typealias Snapshots = SnapshotTests
    static let mallory = UUID(uuidString: "00000000-0000-0000-0000-00000000000F")!

    /// A session of 2,600 orders with honest snapshots at 1,003 (of 1,000) and 2,105 (of 2,100),
    /// every third other order a placeholder of the invitee's, and the last two orders the
    /// invitee's records labelled as snapshots (placeholders too, as the session hands them
    /// on). Returns the stream and the reference that applied it live, having checked that no
    /// placeholder changed anything but the version.
    static func poisonedSession() throws -> (records: [OrderedInput], reference: CoordinatorMachine) {
        var reference = CoordinatorMachine(localParticipant: Snapshots.high)
        var records: [OrderedInput] = []
        var states: [UInt64: CoordinationSnapshot] = [:]
        var proposals = UInt64(1)
        for order in UInt64(1)...2_600 {
            let input: OrderedInput
            if let snapshot = Snapshots.layout.first(where: { $0.order == order }) {
                input = try Snapshots.snapshotRecord(try #require(states[snapshot.reflecting]), order: order)
            } else if order % 3 == 0 || order >= 2_599 {
                input = .placeholder(originator: mallory, order: order)
            } else {
                guard case .proposal(var proposal) = Snapshots.proposal(proposals) else { continue }
                proposal.order = order
                proposal.orderedAt = Snapshots.ordered(at: order)
                proposal.effectiveAt = Snapshots.ordered(at: order) + .milliseconds(50)
                input = .proposal(proposal)
                proposals += 1
            }
            let before = reference.core
            let directives = reference.onOrdered(input, now: .zero)
            if case .placeholder = input {
                #expect(directives.allSatisfy { if case .publishSnapshot = $0 { true } else { false } })
                var unchanged = before
                unchanged.timeline.version = order
                #expect(reference.core == unchanged)
            }
            if Snapshots.layout.contains(where: { $0.reflecting == order }) { states[order] = CoordinationSnapshot(core: reference.core) }
            records.append(input)
        }
        return (records, reference)
    }

    @Test func aHistoryWithPlaceholdersInterleavedAssemblesFromTheNewestHonestSnapshot() throws {
        let (records, reference) = try Self.poisonedSession()
        let history = Snapshots.kept(records, snapshots: Snapshots.layout)
        #expect(history.contains { if case .placeholder = $0 { true } else { false } })
        let (joiner, notes) = Snapshots.join(history)
        #expect(notes == [.restored(order: 2_105, reflecting: 2_100)])
        #expect(joiner.snapshots.phase == .live)
        #expect(joiner.core == reference.core)
        #expect(joiner.core.timeline.version == 2_600)
        // Without the placeholders (the records dropped, as a gap), no snapshot could be started
        // from and the joiner would wait.
        let holed = history.filter { if case .placeholder = $0 { false } else { true } }
        let (waiting, waitingNotes) = Snapshots.join(holed)
        #expect(waiting.snapshots.phase == .history)
        #expect(waitingNotes.contains { if case .incomplete = $0 { true } else { false } })
    }

    @Test func aPlaceholderDecodedFromTheSessionIsNeverASnapshot() {
        let record = OrderedRecordFixture.placeholder(order: 9, retention: .snapshot(reflecting: 8))
        #expect(OrderedInput(record) == .placeholder(originator: Self.mallory, order: 9))
    }

    /// A joiner whose history is incomplete reads hundreds of live snapshots it cannot use
    /// (invalid, and some malformed): each is judged once and reported once, and the first usable
    /// one still starts it.
    @Test func anIncompleteJoinerJudgesEachLiveSnapshotOnce() throws {
        let (records, reference) = try Snapshots.session(count: 2_600, snapshots: Snapshots.layout, corrupt: [1_003, 2_105])
        var (joiner, notes) = Snapshots.join(Snapshots.kept(records, snapshots: Snapshots.layout))
        #expect(notes.last == .incomplete(missing: 1...1_000))
        var live = reference
        var skipped: [UInt64] = []
        for order in UInt64(2_601)...3_000 {
            let bogus: OrderedInput = .snapshot(SnapshotRecord(originator: Self.mallory, order: order, orderedAt: Snapshots.ordered(at: order),
                                                               reflecting: order % 7 == 0 ? order : order - 1, body: Array("{}".utf8)))
            _ = live.onOrdered(bogus, now: .zero)
            for directive in joiner.onOrdered(bogus, now: .zero) {
                if case .emit(.snapshotHistory(.skipped(let skippedOrder, _, _))) = directive { skipped.append(skippedOrder) }
                if case .emit(.snapshotHistory(.incomplete)) = directive { Issue.record("incomplete reported again at \(order)") }
            }
        }
        #expect(skipped == Array(2_601...3_000), "each bogus snapshot reported once, as it came")
        #expect(joiner.snapshots.phase == .history)
        let honest = try Snapshots.snapshotRecord(CoordinationSnapshot(core: live.core), order: 3_001)
        notes = joiner.onOrdered(honest, now: .zero).compactMap { if case .emit(.snapshotHistory(let note)) = $0 { note } else { nil } }
        #expect(notes == [.restored(order: 3_001, reflecting: 3_000)])
        _ = live.onOrdered(honest, now: .zero)
        #expect(joiner.core == live.core)
    }

    /// A live participant checks another's snapshot against what it applied up to the order the
    /// snapshot reflects: a lying one is refused and does not put off its own next snapshot; a
    /// true one does, as before.
    @Test func aLiveParticipantRefusesALyingSnapshotAndPublishesOnSchedule() throws {
        func publisherAt999() -> CoordinatorMachine {
            var publisher = CoordinatorMachine(localParticipant: Snapshots.low)
            for order in UInt64(1)...999 { _ = publisher.onOrdered(Snapshots.proposal(order), now: .zero) }
            return publisher
        }
        // The state after 2 proposals, published as the state after 999.
        var lying = try #require(try JSONSerialization.jsonObject(with: Data(CoordinationSnapshot(core: Snapshots.core(after: 2)).encoded()))
            as? [String: Any])
        Snapshots.editTimeline(&lying) { $0["version"] = 999 }
        let lyingBody = Array(try JSONSerialization.data(withJSONObject: lying))
        let lie = OrderedInput.snapshot(SnapshotRecord(originator: Self.mallory, order: 1_000, orderedAt: Snapshots.ordered(at: 1_000),
                                                       reflecting: 999, body: lyingBody))
        var publisher = publisherAt999()
        let truth = try Snapshots.snapshotRecord(CoordinationSnapshot(core: publisher.core), order: 1_000, by: Self.mallory)
        // The lie passes the bounds a joiner checks: only the state tells it apart.
        let passes = if case .success = CoordinationSnapshot.validated(lyingBody, reflecting: 999, orderedAt: Snapshots.ordered(at: 1_000),
                                                                       pauseSnapsToMediaTimeOfOriginator: true) { true } else { false }
        #expect(passes)
        let published = Snapshots.published(publisher.onOrdered(lie, now: .zero))
        #expect(publisher.snapshots.refusedLiveSnapshots == 1)
        #expect(published.map(\.reflecting) == [1_000], "the lie counted as a record: 1,000 since the start")

        var trusting = publisherAt999()
        #expect(Snapshots.published(trusting.onOrdered(truth, now: .zero)).isEmpty)
        #expect(trusting.snapshots.refusedLiveSnapshots == 0)
        #expect(trusting.snapshots.recordsSinceSnapshot == 0)
    }
}

/// Ordered records as the session hands them, for these tests.
enum OrderedRecordFixture {
    static func placeholder(order: UInt64, retention: OrderedRetention) -> OrderedRecord {
        OrderedRecord(sender: PlaceholderHistoryTests.mallory, order: order, orderedAt: 0, effectiveAt: 0, retention: retention,
                      body: .placeholder(.malformed))
    }
}
