import Foundation
import Testing
import Tandem
import TandemClock
import TandemWire
@testable import TandemPlayback

/// Activity changes (`session.activity = …`) share the ordered stream with playback proposals:
/// the coordinator passes over them silently, in `OrderedInput.init`, with no rejection event,
/// and they still take their order number, live and in a late joiner's history (where the relay
/// keeps them past the snapshots). Pure values, no relay, no clock read.
@Suite struct ActivityRecordTests {
    static let second: Int64 = 1_000_000_000
    static let ms: Int64 = 1_000_000
    static let low = UUID(uuidString: "00000000-0000-0000-0000-000000000001")!
    static let ben = UUID(uuidString: "80000000-0000-0000-0000-000000000002")!
    /// An activity change as the session sends it: its two-byte marker, then the description.
    static let activityBody: [UInt8] = [0x00, 0x41] + Array(#"{"identifier":"watch","activity":"e30="}"#.utf8)

    static func delivery(_ order: UInt64, _ body: [UInt8], retention: OrderedRetention = .kept) -> OrderedPlaintext {
        OrderedPlaintext(sender: ben, order: order, orderedAt: 1_000 * second + Int64(order) * ms,
                         effectiveAt: 1_000 * second + Int64(order) * ms + 50 * ms, retention: retention, body: body)
    }

    static func proposal(_ order: UInt64, _ proposal: PlaybackProposal) throws -> OrderedInput {
        OrderedInput(delivery(order, Array(try JSONEncoder().encode(proposal)), retention: .playback))
    }

    static func rejections(_ directives: [CoordinatorMachine.OrderedDirective]) -> [CoordinatorMachine.OrderedDirective] {
        directives.filter { if case .emit(.proposalRejected) = $0 { true } else { false } }
    }

    @Test func anActivityChangeBecomesARecordOfAnotherKindNotAnUnreadableOne() throws {
        #expect(ActivityChange.isChange(Self.activityBody))
        #expect(OrderedInput(Self.delivery(7, Self.activityBody)) == .other(originator: Self.ben, order: 7))
        #expect(OrderedInput(Self.delivery(7, Self.activityBody)).order == 7)
        // Whatever follows the marker, and however long: it is the session's, never a proposal.
        let long = [0x00, 0x41] + [UInt8](repeating: 0x7B, count: CoordinationCore.maximumProposalBytes + 10)
        #expect(OrderedInput(Self.delivery(8, long)) == .other(originator: Self.ben, order: 8))
        // A body that is neither stays unreadable, and is rejected as before.
        guard case .unreadable(_, 9, let rejection) = OrderedInput(Self.delivery(9, [0x00, 0x42, 0x7B])) else {
            Issue.record("a body with another first bytes was not unreadable")
            return
        }
        #expect(rejection.reason == .unreadable)
    }

    @Test func aChatLineIsARecordOfAnotherKindToo() throws {
        let chat: [UInt8] = [0x00, 0x43] + Array("hello, group".utf8)  // as GroupSession.sendChat seals it
        #expect(ChatRecord.isChat(chat))
        #expect(OrderedInput(Self.delivery(11, chat, retention: .recent(count: 100))) == .other(originator: Self.ben, order: 11))
        var machine = CoordinatorMachine(localParticipant: Self.low)
        _ = machine.onClockMapping(ClockMapping(session: sessionNS(1_000 * Self.second), host: .zero), now: .zero)
        _ = machine.onOrdered(try Self.proposal(1, .state(item: "film", identity: "d=60.000;h=aa", ready: true)), now: .zero)
        let directives = machine.onOrdered(OrderedInput(Self.delivery(2, chat, retention: .recent(count: 100))), now: .zero)
        #expect(Self.rejections(directives).isEmpty)
        #expect(machine.core.timeline.version == 2)
    }

    @Test func theMachinePassesOverAnActivityChangeSilentlyAndKeepsTheVersionInStep() throws {
        var machine = CoordinatorMachine(localParticipant: Self.low)
        _ = machine.onClockMapping(ClockMapping(session: sessionNS(1_000 * Self.second), host: .zero), now: .zero)
        _ = machine.onOrdered(try Self.proposal(1, .state(item: "film", identity: "d=60.000;h=aa", ready: true)), now: .zero)
        _ = machine.onOrdered(try Self.proposal(2, .transition(item: "film", at: .zero)), now: .zero)
        _ = machine.onOrdered(try Self.proposal(3, .setRate(1)), now: .zero)
        let before = machine.core
        let commandsBefore = machine.inFlight
        let directives = machine.onOrdered(OrderedInput(Self.delivery(4, Self.activityBody)), now: .zero)
        // No event, no command: only the version moves, as every participant's does.
        #expect(directives.isEmpty)
        #expect(machine.core.timeline.version == 4)
        #expect(machine.core.timeline.rate == before.timeline.rate && machine.core.timeline.item == before.timeline.item)
        #expect(machine.core.timeline.anchorMediaTime == before.timeline.anchorMediaTime)
        #expect(machine.inFlight == commandsBefore)
        // The proposal after it applies as usual.
        let paused = machine.onOrdered(try Self.proposal(5, .pause(at: nil)), now: .zero)
        #expect(Self.rejections(paused).isEmpty)
        #expect(machine.core.timeline.version == 5 && machine.core.timeline.rate == 0)
        // An unreadable body, by contrast, is still rejected with an event.
        let garbage = machine.onOrdered(OrderedInput(Self.delivery(6, Array("not a proposal".utf8))), now: .zero)
        #expect(Self.rejections(garbage).count == 1)
    }

    @Test func aLateJoinersHistoryKeepsActivityChangesPastTheSnapshotAndAssemblesWhole() throws {
        // The group: an activity change at 1, playback 2…5, a snapshot at 6 reflecting 5, an
        // activity change at 7, a play at 8.
        var present = CoordinatorMachine(localParticipant: Self.low)
        let playback: [(UInt64, PlaybackProposal)] = [
            (2, .state(item: "film", identity: "d=60.000;h=aa", ready: true)), (3, .transition(item: "film", at: .zero)),
            (4, .seek(to: ItemTime(nanoseconds: 5 * Self.second))), (5, .pause(at: nil)),
        ]
        var all: [UInt64: OrderedInput] = [1: OrderedInput(Self.delivery(1, Self.activityBody))]
        for (order, proposal) in playback { all[order] = try Self.proposal(order, proposal) }
        var rejected = 0
        for order in UInt64(1)...5 { rejected += Self.rejections(present.onOrdered(all[order]!, now: .zero)).count }
        let snapshot = CoordinationSnapshot(core: present.core)
        #expect(snapshot.reflecting == 5)
        all[6] = .snapshot(SnapshotRecord(originator: Self.low, order: 6, orderedAt: sessionNS(1_000 * Self.second + 6 * Self.ms),
                                          reflecting: 5, body: try snapshot.encoded()))
        all[7] = OrderedInput(Self.delivery(7, Self.activityBody))
        all[8] = try Self.proposal(8, .setRate(1))
        for order in UInt64(6)...8 { rejected += Self.rejections(present.onOrdered(all[order]!, now: .zero)).count }
        #expect(rejected == 0)

        // The relay dropped the playback records the snapshot covers, and kept the activity changes.
        var joiner = CoordinatorMachine(localParticipant: Self.ben)
        joiner.snapshots.noteChannel(expectsHistoryEnd: true, present: [Self.low, Self.ben])
        var directives: [CoordinatorMachine.OrderedDirective] = []
        for order: UInt64 in [1, 6, 7, 8] { directives += joiner.onOrdered(all[order]!, now: .zero) }
        directives += joiner.onOrdered(.endOfHistory, now: .zero)
        #expect(directives.contains(.emit(.snapshotHistory(.restored(order: 6, reflecting: 5)))))
        #expect(!directives.contains { if case .emit(.snapshotHistory(.incomplete)) = $0 { true } else { false } })
        #expect(Self.rejections(directives).isEmpty)
        #expect(joiner.core == present.core)
        #expect(joiner.core.timeline.version == 8 && joiner.core.timeline.rate == 1)
    }
}
