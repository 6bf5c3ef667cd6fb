import Foundation
import TandemNet
import TandemWire
import Testing

/// Chat's retention in the pure relay core: `.recent(count:)` records are kept
/// while among the newest `count`, and past that only until the older kept snapshot covers
/// their order, so that the relay keeps a bounded chat (it reads none of it) and a late
/// joiner's history never misses an order after the snapshot it starts from.
@Suite("Relay core chat retention")
struct ChatRetentionCoreTests {
    private let key = [UInt8](repeating: 5, count: 32)
    private let session = UUID()

    private var admission: CoreAdmission { CoreAdmission(key: key, session: session) }

    private func started() -> RelayCore { admission.startedCore() }

    /// What a joiner on `connection` receives as history (it leaves after).
    private func history(_ core: inout RelayCore, on connection: RelayConnectionID, at now: Int64) -> [RelayOrderedEntry] {
        admission.historyOnJoin(&core, on: connection, at: now, leaving: true).history
    }

    private func propose(_ core: inout RelayCore, _ sequence: UInt64, _ retention: OrderedRetention, _ body: [UInt8], at now: Int64) {
        _ = core.onFrame(.proposal(sequence: sequence, retention: retention, body: body), from: RelayConnectionID(1), at: now)
    }

    @Test("without a snapshot every chat line is kept: a joiner replays from order 1 without a gap")
    func keptUntilCovered() {
        var core = started()
        for sequence in UInt64(1)...8 { propose(&core, sequence, .recent(count: 3), [UInt8(sequence)], at: Int64(sequence)) }
        #expect(history(&core, on: RelayConnectionID(2), at: 9).map(\.order) == Array(1...8))
    }

    @Test("past the newest count, lines at or below the older snapshot's reflected order go; newer ones stay")
    func newestCountOnceCovered() {
        var core = started()
        var sequence: UInt64 = 0
        func next() -> UInt64 { sequence += 1; return sequence }
        // Orders 1–6 chat, 7 playback, 8 a snapshot reflecting 7, then chat 9–10.
        for order in 1...6 { propose(&core, next(), .recent(count: 3), [UInt8(order)], at: Int64(order)) }
        propose(&core, next(), .playback, [7], at: 7)
        propose(&core, next(), .snapshot(reflecting: 7), [8], at: 8)
        // The snapshot covers 1–6: the newest three chat lines (4–6) stay.
        #expect(history(&core, on: RelayConnectionID(2), at: 9).map(\.order) == [4, 5, 6, 8])
        propose(&core, next(), .recent(count: 3), [9], at: 9)
        propose(&core, next(), .recent(count: 3), [10], at: 10)
        // 4 and 5 go (covered, with three newer lines each time); 9 and 10 are past the snapshot.
        let entries = history(&core, on: RelayConnectionID(3), at: 11)
        #expect(entries.map(\.order) == [6, 8, 9, 10])
        #expect(entries.map(\.retention) == [.recent(count: 3), .snapshot(reflecting: 7), .recent(count: 3), .recent(count: 3)])
        #expect(core.orderedHistoryBytes(of: session) == 4)
    }

    @Test("a long chat with a snapshot every 50 records stays at the newest 100 lines and what follows the snapshot")
    func longChatStaysBounded() {
        var core = started()
        var sequence: UInt64 = 0
        var largest = 0
        for round in 0..<100 {
            for _ in 0..<49 {
                sequence += 1
                propose(&core, sequence, .recent(count: 100), [UInt8(truncatingIfNeeded: sequence)], at: Int64(sequence))
            }
            sequence += 1
            // A snapshot of the state after the record before it.
            propose(&core, sequence, .snapshot(reflecting: sequence - 1), [0], at: Int64(sequence))
            largest = max(largest, core.orderedHistoryBytes(of: session))
            if round == 99 {
                let entries = history(&core, on: RelayConnectionID(2), at: Int64(sequence + 1))
                let chat = entries.filter { $0.retention == .recent(count: 100) }
                #expect(chat.count == 100, "the newest 100 lines")
                #expect(chat.last?.order == sequence - 1)
                #expect(entries.filter { $0.retention.reflectedOrder != nil }.count == 2)
            }
        }
        // 100 lines kept, plus at most the 49 since the older snapshot, plus two snapshots.
        #expect(largest <= 100 + 49 + 2)
    }

    @Test("the retention on the wire: 3, then the count; a count of 0 is malformed")
    func wire() throws {
        var writer = ByteWriter()
        writer.retention(.recent(count: 100))
        #expect(writer.bytes == [3, 0, 100])
        var reader = ByteReader(writer.bytes[...], context: "test")
        #expect(try reader.retention() == .recent(count: 100))
        var zero = ByteReader([3, 0, 0][...], context: "test")
        #expect(throws: WireError.self) { try zero.retention() }
    }
}
