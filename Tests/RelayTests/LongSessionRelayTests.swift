import Foundation
import TandemNet
import TandemTestKit
import TandemWire
import Testing

/// A long session on the real relay over loopback: a raw client pipelines many small ordered
/// proposals with a snapshot every 1,000, then a late joiner's welcome history has the bounded
/// shape (what follows the older snapshot's reflected order, both snapshots), however many
/// proposals came before.
@Suite("Relay long session", .serialized)
struct LongSessionRelayIOTests {
    /// Playback proposals the raw client makes (100,000 take about 8 s alone in a debug build
    /// and 17 s beside other builds; the shape does not depend on the count, and the pure core's
    /// test makes 100,000).
    static let proposals = 50_000
    /// A snapshot follows every this many.
    static let snapshotInterval = 1_000
    /// How many orders before its own a snapshot reflects (as if others came in while it was made).
    static let snapshotLag: UInt64 = 4
    /// How far the client runs ahead of the echoes it has read (the relay's outbox bound is 20,000).
    static let window: UInt64 = 5_000

    @Test("50,000 pipelined proposals with a snapshot every 1,000: a late joiner gets the two snapshots and what follows")
    func lateJoinerAfterLongSession() async throws {
        var configuration = RelayHarness.testConfiguration
        // The client sends as fast as loopback takes it: flood control is not what is tested here.
        configuration.floodRate = 10_000_000
        configuration.floodBurst = 10_000_000
        let harness = try RelayHarness(.network, configuration: configuration)
        defer { harness.shutdown() }
        let port = try #require(harness.server).port
        let session = UUID()
        let raw = try RawRelayClient(port: port)
        defer { raw.socket.shutdown() }
        try raw.admit(session: session, key: RelayHarness.key, create: true)

        let started = ContinuousClock.now
        var sequence: UInt64 = 0
        var echoed: UInt64 = 0
        var acknowledged: UInt64 = 0
        var snapshots: [(order: UInt64, reflecting: UInt64)] = []
        var batch: [UInt8] = []
        let body = [UInt8](repeating: 0xAB, count: 64)
        let state = [UInt8](repeating: 0x5A, count: 1_024)
        let deadline = ContinuousClock.now + .seconds(60)
        for proposal in 1...Self.proposals {
            // The client is the only proposer: its n-th proposal gets order n.
            sequence += 1
            batch += RelayFrame.proposal(sequence: sequence, retention: .playback, body: body).encoded()
            if proposal.isMultiple(of: Self.snapshotInterval) {
                sequence += 1
                let reflecting = sequence - Self.snapshotLag
                batch += RelayFrame.proposal(sequence: sequence, retention: .snapshot(reflecting: reflecting), body: state).encoded()
                snapshots.append((sequence, reflecting))
            }
            guard batch.count > 32_000 || proposal == Self.proposals else { continue }
            #expect(try raw.sendWithin(batch, timeout: .seconds(5)), "the relay reads the proposals")
            batch.removeAll(keepingCapacity: true)
            // Read the echoes, acknowledging them, until within the window (or everything, at the end).
            let target = proposal == Self.proposals ? sequence : sequence > Self.window ? sequence - Self.window : 0
            while echoed < target, ContinuousClock.now < deadline {
                guard let frame = try raw.nextFrame() else { throw LongSessionError.closed }
                if case let .ordered(relaySequence, entry) = frame {
                    echoed = entry.order
                    if relaySequence > acknowledged + 1_000 || echoed == target {
                        try raw.send(RelayFrame.ack(relaySequence).encoded())
                        acknowledged = relaySequence
                    }
                }
            }
        }
        #expect(echoed == sequence, "every proposal was ordered and echoed")
        let proposing = ContinuousClock.now - started

        let joinStarted = ContinuousClock.now
        let carol = try await harness.join(session, "carol")
        let joining = ContinuousClock.now - joinStarted
        let history = carol.link.welcome.orderedHistory
        let older = snapshots[snapshots.count - 2]
        let newer = snapshots[snapshots.count - 1]
        #expect(history.map(\.order) == Array((older.reflecting + 1)...sequence))
        #expect(history.filter { $0.retention.reflectedOrder != nil }.map(\.retention)
            == [.snapshot(reflecting: older.reflecting), .snapshot(reflecting: newer.reflecting)])
        #expect(history.filter { $0.retention == .playback }.count == history.count - 2)
        let bytes = history.reduce(0) { $0 + $1.body.count }
        print("long session: \(Self.proposals) proposals and \(snapshots.count) snapshots in \(proposing); a joiner received \(history.count) records (\(bytes) bytes of bodies) in \(joining)")
    }
}

private enum LongSessionError: Error {
    case closed
}
