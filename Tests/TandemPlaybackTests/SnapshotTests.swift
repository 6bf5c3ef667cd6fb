import Foundation
import Testing
import TandemClock
@testable import TandemPlayback

/// Snapshots as pure values and machine inputs, with no relay, clock or sleep: the core's round
/// trip, the validation of every field, the schedule the lowest id publishes on, and a late
/// joiner assembling its history from snapshots onto exactly the state of a participant who
/// applied everything from order 1.
@Suite struct SnapshotTests {
    static let second: Int64 = 1_000_000_000
    /// The session instant of order 0.
    static let base: Int64 = 1_000 * second
    static let low = UUID(uuidString: "00000000-0000-0000-0000-000000000001")!
    static let high = UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")!
    static let others = (0..<4).map { UUID(uuidString: String(format: "80000000-0000-0000-0000-%012x", $0))! }

    static func ordered(at order: UInt64) -> SessionInstant { sessionNS(base + Int64(order) * 1_000_000) }

    /// The proposal ordered `order` of a varied, valid session: a one-hour film, then seeks,
    /// rate changes, pauses, state reports and suspensions begun and ended.
    static func proposal(_ order: UInt64) -> OrderedInput {
        func id(_ n: UInt64) -> UUID { UUID(uuidString: String(format: "00000000-0000-0000-0001-%012llx", n))! }
        let who = others[Int(order % 4)]
        let change: PlaybackProposal = switch order {
        case 1: .state(item: "film", identity: "d=3600.000;h=aa", ready: true)
        case 2: .transition(item: "film", at: 0)
        default:
            switch order % 6 {
            case 0: .seek(to: itemNS(Int64(order % 3_000) * second))
            case 1: .setRate(order % 12 == 1 ? 1.5 : 1)
            case 2: .pause(at: nil)
            case 3: .state(item: "film", identity: "d=3600.000;h=\(order % 5)", ready: order % 2 == 0)
            case 4: .beginSuspension(id: id(order), reason: .stallRecovery, triggersWaiting: true, waitingLimit: nil)
            default: .endSuspension(id: id(order - 1), proposedTime: nil)
            }
        }
        return .proposal(OrderedProposal(originator: who, order: order, orderedAt: ordered(at: order),
                                         effectiveAt: ordered(at: order) + .milliseconds(50), proposal: change))
    }

    /// A core after `count` proposals.
    static func core(after count: UInt64) -> CoordinationCore {
        var core = CoordinationCore()
        for order in 1...count {
            guard case .proposal(let proposal) = proposal(order) else { continue }
            _ = core.apply(proposal)
        }
        return core
    }

    static func validated(_ body: [UInt8], reflecting: UInt64, orderedAt: SessionInstant) -> Result<CoordinationSnapshot, ProposalRejection> {
        CoordinationSnapshot.validated(body, reflecting: reflecting, orderedAt: orderedAt, pauseSnapsToMediaTimeOfOriginator: true)
    }

    // MARK: Round trip and validation

    @Test func aSnapshotRoundTripsToTheSameCore() throws {
        let core = Self.core(after: 502)
        #expect(core.suspensions.count == 1 && core.participants.count == 2 && core.timeline.item == "film")
        let body = try CoordinationSnapshot(core: core).encoded()
        #expect(body.count < CoordinationSnapshot.maximumBytes)
        // A small group's state is a few hundred bytes.
        #expect(body.count < 2_048)
        let restored = try Self.validated(body, reflecting: 502, orderedAt: Self.ordered(at: 503)).get()
        #expect(restored.core == core)
        #expect(restored.reflecting == 502)
    }

    @Test func aSnapshotPublishedAsReflectingAnotherOrderIsRefused() throws {
        let body = try CoordinationSnapshot(core: Self.core(after: 40)).encoded()
        #expect(throws: ProposalRejection.self) { try Self.validated(body, reflecting: 39, orderedAt: Self.ordered(at: 45)).get() }
        let otherSnapping = CoordinationSnapshot.validated(body, reflecting: 40, orderedAt: Self.ordered(at: 45),
                                                            pauseSnapsToMediaTimeOfOriginator: false)
        #expect(throws: ProposalRejection.self) { try otherSnapping.get() }
    }

    /// The snapshot of a small session as JSON, edited by `edit`, then validated as reflecting
    /// order 40, ordered at order 45's instant.
    static func edited(_ edit: (inout [String: Any]) -> Void) throws -> Result<CoordinationSnapshot, ProposalRejection> {
        let body = try CoordinationSnapshot(core: core(after: 40)).encoded()
        var json = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
        edit(&json)
        return validated(Array(try JSONSerialization.data(withJSONObject: json)), reflecting: 40, orderedAt: ordered(at: 45))
    }

    static func editCore(_ envelope: inout [String: Any], _ edit: (inout [String: Any]) -> Void) {
        var core = envelope["core"] as! [String: Any]
        edit(&core)
        envelope["core"] = core
    }

    static func editTimeline(_ envelope: inout [String: Any], _ edit: (inout [String: Any]) -> Void) {
        editCore(&envelope) { core in
            var timeline = core["timeline"] as! [String: Any]
            edit(&timeline)
            core["timeline"] = timeline
        }
    }

    static func suspension(_ id: UUID, of participant: UUID, reason: String = "stallRecovery") -> [String: Any] {
        ["id": id.uuidString, "participant": participant.uuidString, "reason": reason, "holdsGroup": false]
    }

    static func participants(_ count: Int, item: String? = "film", identity: String? = nil) -> [Any] {
        (0..<count).flatMap { n -> [Any] in
            var state: [String: Any] = ["ready": true]
            if let item { state["item"] = item }
            if let identity { state["identity"] = identity }
            return [UUID(uuidString: String(format: "00000000-0000-0000-0002-%012x", n))!.uuidString, state]
        }
    }

    @Test func theUneditedSnapshotIsValid() throws {
        #expect(throws: Never.self) { try Self.edited { _ in }.get() }
    }

    /// Each field beyond its bound, and the reason it is refused with.
    @Test(arguments: [
        ("format", ProposalRejection.Reason.unreadable),
        ("version", .unreadable),
        ("empty item", .oversized),
        ("long item", .oversized),
        ("huge intended rate", .rateOutOfRange),
        ("negative intended rate", .rateOutOfRange),
        ("rate neither 0 nor intended", .rateOutOfRange),
        ("negative anchor", .mediaTimeOutOfRange),
        ("far anchor", .mediaTimeOutOfRange),
        ("future anchor instant", .effectiveInstantOutOfRange),
        ("too many suspensions", .tooManySuspensions),
        ("too many of one participant", .tooManySuspensions),
        ("a suspension twice", .unreadable),
        ("long reason", .oversized),
        ("too many participants", .tooManyParticipants),
        ("long participant item", .oversized),
        ("long identity", .oversized),
    ])
    func aFieldOutOfBoundsIsRefused(field: String, reason: ProposalRejection.Reason) throws {
        let result = try Self.edited { envelope in
            switch field {
            case "format": envelope["format"] = 2
            case "version": Self.editTimeline(&envelope) { $0["version"] = 39 }
            case "empty item": Self.editTimeline(&envelope) { $0["item"] = "" }
            case "long item": Self.editTimeline(&envelope) { $0["item"] = String(repeating: "x", count: CoordinationCore.maximumItemBytes + 1) }
            case "huge intended rate": Self.editCore(&envelope) { $0["intendedRate"] = 1e15 }
            case "negative intended rate": Self.editCore(&envelope) { $0["intendedRate"] = -1 }
            case "rate neither 0 nor intended":
                Self.editCore(&envelope) { $0["intendedRate"] = 1 }
                Self.editTimeline(&envelope) { $0["rate"] = 2 }
            case "negative anchor": Self.editTimeline(&envelope) { $0["anchorMediaTime"] = -1 }
            case "far anchor": Self.editTimeline(&envelope) { $0["anchorMediaTime"] = Int64.max }
            case "future anchor instant":
                Self.editTimeline(&envelope) { $0["anchorSessionTime"] = (Self.ordered(at: 45) + .seconds(3)).nanoseconds }
            case "too many suspensions":
                Self.editCore(&envelope) { core in
                    core["suspensions"] = (0...CoordinationCore.maximumSuspensions).map { _ in Self.suspension(UUID(), of: UUID()) }
                }
            case "too many of one participant":
                Self.editCore(&envelope) { core in
                    core["suspensions"] = (0...CoordinationCore.maximumSuspensionsPerParticipant).map { _ in Self.suspension(UUID(), of: Self.low) }
                }
            case "a suspension twice":
                let id = UUID()
                Self.editCore(&envelope) { $0["suspensions"] = [Self.suspension(id, of: Self.low), Self.suspension(id, of: Self.high)] }
            case "long reason":
                Self.editCore(&envelope) { core in
                    core["suspensions"] = [Self.suspension(UUID(), of: Self.low,
                                                           reason: String(repeating: "r", count: CoordinationCore.maximumReasonBytes + 1))]
                }
            case "too many participants": Self.editCore(&envelope) { $0["participants"] = Self.participants(CoordinationCore.maximumParticipants + 1) }
            case "long participant item":
                Self.editCore(&envelope) { $0["participants"] = Self.participants(1, item: String(repeating: "i", count: CoordinationCore.maximumItemBytes + 1)) }
            case "long identity":
                Self.editCore(&envelope) {
                    $0["participants"] = Self.participants(1, identity: String(repeating: "d", count: CoordinationCore.maximumIdentityBytes + 1))
                }
            default: Issue.record("no such field \(field)")
            }
        }
        guard case .failure(let rejection) = result else {
            Issue.record("\(field): accepted")
            return
        }
        #expect(rejection.reason == reason, "\(field): \(rejection)")
    }

    @Test func anUnreadableOrOversizedBodyIsRefused() {
        let garbage = Self.validated(Array("not a snapshot".utf8), reflecting: 1, orderedAt: Self.ordered(at: 2))
        #expect((try? garbage.get()) == nil)
        if case .failure(let rejection) = garbage { #expect(rejection.reason == .unreadable) }
        let huge = Self.validated([UInt8](repeating: 0x20, count: CoordinationSnapshot.maximumBytes + 1), reflecting: 1, orderedAt: Self.ordered(at: 2))
        if case .failure(let rejection) = huge { #expect(rejection.reason == .oversized) } else { Issue.record("accepted") }
    }

    // MARK: Publishing

    static func published(_ directives: [CoordinatorMachine.OrderedDirective]) -> [CoordinationSnapshot] {
        directives.compactMap { if case .publishSnapshot(let snapshot) = $0 { snapshot } else { nil } }
    }

    static func snapshotRecord(_ snapshot: CoordinationSnapshot, order: UInt64, by who: UUID = low) throws -> OrderedInput {
        .snapshot(SnapshotRecord(originator: who, order: order, orderedAt: ordered(at: order), reflecting: snapshot.reflecting,
                                 body: try snapshot.encoded()))
    }

    @Test func theLowestIdPublishesEveryThousandRecordsOnceItsLastCameBack() throws {
        var publisher = CoordinatorMachine(localParticipant: Self.low)
        var other = CoordinatorMachine(localParticipant: Self.high)
        var snapshots: [CoordinationSnapshot] = []
        for order in UInt64(1)...999 {
            snapshots += Self.published(publisher.onOrdered(Self.proposal(order), now: .zero))
            #expect(Self.published(other.onOrdered(Self.proposal(order), now: .zero)).isEmpty)
        }
        #expect(snapshots.isEmpty)
        snapshots += Self.published(publisher.onOrdered(Self.proposal(1000), now: .zero))
        #expect(snapshots.count == 1)
        #expect(snapshots.first?.reflecting == 1000)
        #expect(snapshots.first?.core == publisher.core)
        // Not again before it comes back ordered.
        for order in UInt64(1001)...1500 { #expect(Self.published(publisher.onOrdered(Self.proposal(order), now: .zero)).isEmpty) }
        // Back, ordered 1501: the 500 records ordered since the order it reflects (1001…1500)
        // count, so 500 more make the next one due, reflecting the last.
        let first = try #require(snapshots.first)
        #expect(Self.published(publisher.onOrdered(try Self.snapshotRecord(first, order: 1501), now: .zero)).isEmpty)
        #expect(publisher.core.timeline.version == 1501)
        #expect(publisher.snapshots.recordsSinceSnapshot == 500)
        for order in UInt64(1502)...2000 { #expect(Self.published(publisher.onOrdered(Self.proposal(order), now: .zero)).isEmpty) }
        let second = Self.published(publisher.onOrdered(Self.proposal(2001), now: .zero))
        #expect(second.map(\.reflecting) == [2001])
        // The other participant never publishes while a lower id is present.
        for order in UInt64(1000)...2001 { #expect(Self.published(other.onOrdered(Self.proposal(order), now: .zero)).isEmpty) }
    }

    @Test func aSnapshotOvertakenByABurstIsFollowedByAnotherAtOnce() throws {
        // The publisher's snapshot reflecting 1,000 is ordered behind 1,500 records of a burst: a
        // joiner starting from it would apply them all, so the next is due as it comes back,
        // reflecting the burst; the one after waits for a thousand records again.
        var publisher = CoordinatorMachine(localParticipant: Self.low)
        var snapshots: [CoordinationSnapshot] = []
        for order in UInt64(1)...1000 { snapshots += Self.published(publisher.onOrdered(Self.proposal(order), now: .zero)) }
        let first = try #require(snapshots.first)
        for order in UInt64(1001)...2500 { #expect(Self.published(publisher.onOrdered(Self.proposal(order), now: .zero)).isEmpty) }
        let next = Self.published(publisher.onOrdered(try Self.snapshotRecord(first, order: 2501), now: .zero))
        #expect(next.map(\.reflecting) == [2501])
        let again = try #require(next.first)
        #expect(Self.published(publisher.onOrdered(try Self.snapshotRecord(again, order: 2502), now: .zero)).isEmpty)
        #expect(publisher.snapshots.recordsSinceSnapshot == 0)
        for order in UInt64(2503)...3501 { #expect(Self.published(publisher.onOrdered(Self.proposal(order), now: .zero)).isEmpty) }
        #expect(Self.published(publisher.onOrdered(Self.proposal(3502), now: .zero)).map(\.reflecting) == [3502])
    }

    @Test func aPublisherBehindARunOfStaleSnapshotsWaitsForItsOwnAndPublishesOneMore() throws {
        // Its snapshot reflecting 1,000 is in flight when it reads 200 snapshots of another
        // participant, each ordered long after what it reflects (a burst, and several
        // publishers). Each says a joiner would replay 2,000 records, yet it answers none of
        // them: its own is still on the way. Were it to, each answer read by the others would be
        // answered in turn, a storm of snapshots that feeds itself.
        var publisher = CoordinatorMachine(localParticipant: Self.low)
        var published: [CoordinationSnapshot] = []
        for order in UInt64(1)...2000 { published += Self.published(publisher.onOrdered(Self.proposal(order), now: .zero)) }
        #expect(published.map(\.reflecting) == [1000])
        let stale = CoordinationSnapshot(core: Self.core(after: 2))
        for order in UInt64(2001)...2200 {
            published += Self.published(publisher.onOrdered(try Self.snapshotRecord(stale, order: order, by: Self.high), now: .zero))
        }
        #expect(published.count == 1)
        // Its own comes back: 1,200 records since what it reflects, so the next is due at once.
        let own = try #require(published.first)
        #expect(Self.published(publisher.onOrdered(try Self.snapshotRecord(own, order: 2201), now: .zero)).map(\.reflecting) == [2201])
    }

    @Test func aSnapshotThatNeverComesBackIsGivenUpOnAfterTenIntervals() {
        var publisher = CoordinatorMachine(localParticipant: Self.low)
        var published: [UInt64] = []
        for order in UInt64(1)...10_999 {
            published += Self.published(publisher.onOrdered(Self.proposal(order), now: .zero)).map(\.reflecting)
        }
        #expect(published == [1000])
        published += Self.published(publisher.onOrdered(Self.proposal(11_000), now: .zero)).map(\.reflecting)
        #expect(published == [1000, 11_000])
    }

    @Test func aSnapshotTooLargeIsRetriedAnIntervalLaterAndOneRefusedForNowATenthOfOne() {
        var machine = CoordinatorMachine(localParticipant: Self.low)
        var published: [UInt64] = []
        func feed(_ orders: ClosedRange<UInt64>) {
            for order in orders { published += Self.published(machine.onOrdered(Self.proposal(order), now: .zero)).map(\.reflecting) }
        }
        feed(1...1000)
        #expect(published == [1000])
        machine.onSnapshotNotPublished(.tooLarge)
        feed(1001...1999)
        #expect(published == [1000])
        feed(2000...2000)
        #expect(published == [1000, 2000])
        // Refused on the way out (the link's queue full, a reconnection): 100 records later.
        machine.onSnapshotNotPublished(.refused)
        feed(2001...2099)
        #expect(published == [1000, 2000])
        feed(2100...2100)
        #expect(published == [1000, 2000, 2100])
    }

    @Test func aQuietSessionPublishesAfterSixtySecondsAndNotAtAll() {
        var machine = CoordinatorMachine(localParticipant: Self.low)
        // Session instant `base` at host instant 0.
        _ = machine.onClockMapping(ClockMapping(session: sessionNS(Self.base), host: .zero), now: .zero)
        for order in UInt64(1)...5 { #expect(Self.published(machine.onOrdered(Self.proposal(order), now: .zero)).isEmpty) }
        func tickPublishes(_ seconds: Int64) -> [CoordinationSnapshot] {
            machine.onTick(now: hostNS(seconds * Self.second)).compactMap { if case .publishSnapshot(let s) = $0 { s } else { nil } }
        }
        #expect(tickPublishes(59).isEmpty)
        #expect(tickPublishes(61).map(\.reflecting) == [5])
        // Published: not again until it comes back, and then not with nothing since.
        #expect(tickPublishes(200).isEmpty)
    }

    @Test func aLowerIdThatThePresentSetHoldsPublishesInstead() {
        var machine = CoordinatorMachine(localParticipant: Self.others[1])
        machine.snapshots.noteChannel(expectsHistoryEnd: false, present: [Self.low, Self.others[1]])
        var published: [CoordinationSnapshot] = []
        for order in UInt64(1)...1200 { published += Self.published(machine.onOrdered(Self.proposal(order), now: .zero)) }
        #expect(published.isEmpty)
        // Once the lower id has gone, this one publishes.
        var after = machine
        after.snapshots.noteChannel(expectsHistoryEnd: false, present: [Self.others[1]])
        #expect(Self.published(after.onOrdered(Self.proposal(1201), now: .zero)).map(\.reflecting) == [1201])
        // Should the lower id never publish, the second lowest takes over after twice the interval.
        for order in UInt64(1201)...1999 { published += Self.published(machine.onOrdered(Self.proposal(order), now: .zero)) }
        #expect(published.isEmpty)
        #expect(Self.published(machine.onOrdered(Self.proposal(2000), now: .zero)).map(\.reflecting) == [2000])
    }

    // MARK: Joining

    /// A session of `count` records with snapshots: each entry of `snapshots` is (the order it
    /// reflects, its own order), its state the reference's at the order it reflects. Returns the
    /// whole stream and the reference machine that applied all of it live.
    static func session(count: UInt64, snapshots: [(reflecting: UInt64, order: UInt64)],
                        corrupt: Set<UInt64> = []) throws -> (records: [OrderedInput], reference: CoordinatorMachine) {
        var reference = CoordinatorMachine(localParticipant: high)
        var records: [OrderedInput] = []
        var states: [UInt64: CoordinationSnapshot] = [:]
        var proposals = UInt64(1)
        var order = UInt64(1)
        while order <= count {
            let input: OrderedInput
            if let snapshot = snapshots.first(where: { $0.order == order }) {
                let state = try #require(states[snapshot.reflecting])
                input = corrupt.contains(order)
                    ? .snapshot(SnapshotRecord(originator: low, order: order, orderedAt: ordered(at: order), reflecting: snapshot.reflecting,
                                               body: Array("{\"format\":1}".utf8)))
                    : try snapshotRecord(state, order: order)
            } else {
                guard case .proposal(var proposal) = proposal(proposals) else { continue }
                proposal.order = order
                proposal.orderedAt = ordered(at: order)
                proposal.effectiveAt = ordered(at: order) + .milliseconds(50)
                input = .proposal(proposal)
                proposals += 1
            }
            _ = reference.onOrdered(input, now: .zero)
            if snapshots.contains(where: { $0.reflecting == order }) { states[order] = CoordinationSnapshot(core: reference.core) }
            records.append(input)
            order += 1
        }
        return (records, reference)
    }

    /// What the relay keeps: the playback records after the lower of the two newest snapshots'
    /// reflected orders, and those two snapshots.
    static func kept(_ records: [OrderedInput], snapshots: [(reflecting: UInt64, order: UInt64)]) -> [OrderedInput] {
        let newest = snapshots.suffix(2)
        guard let covered = newest.map(\.reflecting).min() else { return records }
        return records.filter { record in
            if case .snapshot(let snapshot) = record { return newest.contains { $0.order == snapshot.order } }
            return (record.order ?? 0) > covered
        }
    }

    static func join(_ history: [OrderedInput]) -> (machine: CoordinatorMachine, notes: [SnapshotHistoryNote]) {
        var joiner = CoordinatorMachine(localParticipant: UUID())
        joiner.snapshots.noteChannel(expectsHistoryEnd: true, present: nil)
        var directives: [CoordinatorMachine.OrderedDirective] = []
        for record in history { directives += joiner.onOrdered(record, now: .zero) }
        directives += joiner.onOrdered(.endOfHistory, now: .zero)
        let notes = directives.compactMap { if case .emit(.snapshotHistory(let note)) = $0 { note } else { nil } }
        return (joiner, notes)
    }

    static let layout: [(reflecting: UInt64, order: UInt64)] = [(1_000, 1_003), (2_100, 2_105)]

    @Test func aJoinerStartsFromTheNewestSnapshotAndLandsOnTheSameCore() throws {
        let (records, reference) = try Self.session(count: 2_600, snapshots: Self.layout)
        let history = Self.kept(records, snapshots: Self.layout)
        #expect(history.count < records.count - 900)
        let (joiner, notes) = Self.join(history)
        #expect(notes == [.restored(order: 2_105, reflecting: 2_100)])
        #expect(joiner.core == reference.core)
        #expect(joiner.snapshots.phase == .live)
        #expect(joiner.snapshots.assembledHistoryRecords == history.count)
        // Live records then apply as on everyone else.
        var live = reference
        var joined = joiner
        for order in UInt64(2_601)...2_650 {
            guard case .proposal(var proposal) = Self.proposal(order) else { continue }
            proposal.orderedAt = Self.ordered(at: order)
            _ = live.onOrdered(.proposal(proposal), now: .zero)
            _ = joined.onOrdered(.proposal(proposal), now: .zero)
        }
        #expect(joined.core == live.core)
    }

    @Test func aCorruptedNewestSnapshotFallsBackToTheOlder() throws {
        let (records, reference) = try Self.session(count: 2_600, snapshots: Self.layout, corrupt: [2_105])
        let (joiner, notes) = Self.join(Self.kept(records, snapshots: Self.layout))
        #expect(notes.first.map { if case .skipped(2_105, 2_100, _) = $0 { true } else { false } } == true, "\(notes)")
        #expect(notes.last == .restored(order: 1_003, reflecting: 1_000))
        #expect(joiner.core == reference.core)
    }

    @Test func withNeitherSnapshotUsableTheJoinerSaysItsStateIsIncompleteAndWaitsForOne() throws {
        let (records, reference) = try Self.session(count: 2_600, snapshots: Self.layout, corrupt: [1_003, 2_105])
        var (joiner, notes) = Self.join(Self.kept(records, snapshots: Self.layout))
        #expect(notes.last == .incomplete(missing: 1...1_000))
        #expect(joiner.snapshots.phase == .history)
        #expect(joiner.core.timeline.version == 0)
        // A live snapshot it can start from: it catches up there.
        let snapshot = try Self.snapshotRecord(CoordinationSnapshot(core: reference.core), order: 2_601)
        let directives = joiner.onOrdered(snapshot, now: .zero)
        notes = directives.compactMap { if case .emit(.snapshotHistory(let note)) = $0 { note } else { nil } }
        #expect(notes.last == .restored(order: 2_601, reflecting: 2_600))
        var expected = reference
        _ = expected.onOrdered(snapshot, now: .zero)
        #expect(joiner.core == expected.core)
    }

    @Test func aFullHistoryNeedsNoSnapshot() throws {
        let (records, reference) = try Self.session(count: 1_500, snapshots: [(1_000, 1_003)], corrupt: [1_003])
        let (joiner, notes) = Self.join(records)
        #expect(notes.allSatisfy { if case .skipped = $0 { true } else { false } })
        #expect(joiner.core == reference.core)
    }
}
