import Foundation
import Synchronization
@testable import Tandem
import TandemNet
import TandemTestKit
import TandemWire
import Testing

/// Every ordered record a session receives is accounted for: one that fails a check (random
/// bytes, a mutated body, a replay, a relabelled header) goes on to the coordinator as a
/// placeholder that keeps its order, so that no invitee can make a gap in anyone's history.
@Suite struct OrderedPlaceholderIOTests {
    /// Orders far above what the relay gives in these sessions, so that the records these tests
    /// hand the session are told apart from its own.
    static let base: UInt64 = 1 << 40

    @Test func fuzzedOrderedBodiesBecomePlaceholdersAndKeepTheOrderCount() async throws {
        let hosted = try await SessionIOTests.host(.inMemory)
        defer { hosted.relay.shutDown() }
        let ana = try await SessionIOTests.guest("ana", of: hosted)
        defer { ana.leave() }
        let handed = Mutex<[OrderedRecord]>([])
        hosted.session.orderedDeliveries(while: { record in
            if record.order >= Self.base { handed.withLock { $0.append(record) } }
            return true
        })
        let sender = ana.localParticipant.id
        func delivery(_ order: UInt64, _ body: [UInt8], retention: OrderedRetention = .playback) -> OrderedDelivery {
            OrderedDelivery(sender: sender, order: Self.base + order, orderedAt: 0, effectiveAt: 0, retention: retention, body: body)
        }
        let honest = ana.bodies.seal(Array("{}".utf8), kind: .playbackProposal, path: .ordered, retention: .playback)
        var random = SeededRandom(seed: 0x0D_E5_ED)
        var expectedPlaceholders = 0
        var deliveries: [OrderedDelivery] = []
        for order in UInt64(1)...1_500 {
            var bytes: [UInt8]
            var retention = OrderedRetention.playback
            switch order % 5 {
            case 0:
                // Random bytes as the sealed body, some labelled as snapshots.
                bytes = (0..<Int(random.next() % 300)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                if order % 10 == 0 { retention = .snapshot(reflecting: Self.base + order - 1) }
            case 1:
                // The honest body replayed under a fresh order.
                bytes = honest
            case 2:
                // A relabelled header.
                bytes = honest
                retention = .kept
            default:
                bytes = honest
                for _ in 0..<Int(random.next() % 3) + 1 {
                    switch random.next() % 3 {
                    case 0: bytes[Int(random.next() % UInt64(bytes.count))] ^= UInt8(truncatingIfNeeded: random.next() | 1)
                    case 1 where bytes.count > 1: bytes.removeLast(Int(random.next() % UInt64(bytes.count - 1)) + 1)
                    default: bytes += (0..<Int(random.next() % 8) + 1).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                    }
                }
            }
            // The first honest copy opens; every other record is one the session must refuse.
            if !(order == 1 && bytes == honest) { expectedPlaceholders += 1 }
            deliveries.append(delivery(order, bytes, retention: retention))
        }
        let rejectedBefore = hosted.session.rejectionCounts.values.reduce(0, +)
        // Half as a joiner's history (opened together), half one by one as live records.
        hosted.session.receiveOrderedHistory(Array(deliveries.prefix(750)))
        for record in deliveries.dropFirst(750) { hosted.session.receiveOrdered(record) }

        let records = handed.withLock { $0 }
        #expect(records.map(\.order) == deliveries.map(\.order), "every order handed on once, in order")
        let placeholders = records.filter { if case .placeholder = $0.body { true } else { false } }
        #expect(placeholders.count == expectedPlaceholders)
        #expect(records.first?.body == .plaintext(Array("{}".utf8)))
        #expect(placeholders.allSatisfy { $0.sender == sender })
        let rejected = hosted.session.rejectionCounts.values.reduce(0, +) - rejectedBefore
        #expect(rejected == expectedPlaceholders, "each placeholder counted as a rejection once")
        #expect(hosted.session.rejectionCounts[.replayed, default: 0] >= 299, "the honest body replayed under every order of its kind but the first")
    }
}
