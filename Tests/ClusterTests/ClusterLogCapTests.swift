import Foundation
import Testing
import TandemCluster
import TandemNATS
import TandemNet
import TandemHarness
import TandemWire

/// A session's log in the cluster is bounded by the relays themselves: a participant flooding its
/// own session is dropped with `limitReached` once the session's log reaches its cap, the log's
/// bytes in JetStream stay about the cap, and another session on the same relay keeps working.
/// Real nats-server.
@Suite("Cluster session log cap", .serialized, .timeLimit(.minutes(2)))
struct ClusterLogCapProcessTests {
    static let cap = 1 << 20

    @Test("a session flooding its log stays within its cap, and another session keeps working")
    func floodIsCapped() async throws {
        let nats = try startNATSNode()
        defer { nats.stop() }
        // Compaction out of the way (its threshold past the cap): the cap alone holds the flood.
        let relay = try await InProcessRelay.start(nats.url, sessionLogLimit: Self.cap, compactionThreshold: 4 * Self.cap)
        defer { Task { await relay.stop() } }
        let flooded = UUID()
        // Another session, on another stream: the flooded stream holds the flooded session alone.
        var other = UUID()
        while ClusterRelay.stream(for: other) == ClusterRelay.stream(for: flooded) { other = UUID() }
        let floodKey = SigningKeyPair()
        let otherKey = SigningKeyPair()
        let mallory = try await Participant.join(flooded, key: floodKey, "mallory", relays: [relay.endpoint], create: true)
        let ana = try await Participant.join(other, key: otherKey, "ana", relays: [relay.endpoint], create: true)
        let ben = try await Participant.join(other, key: otherKey, "ben", relays: [relay.endpoint])

        // Three times the cap, in 32 KiB messages, as fast as the link takes them.
        let body = [UInt8](repeating: 0x5A, count: 32 * 1024)
        for _ in 0..<(3 * Self.cap / body.count) {
            do {
                try mallory.link.send(body, to: .everyone, reliable: true)
            } catch {
                break
            }
        }
        let refused = await mallory.wait(20) { participant in
            participant.events.contains { if case let .failed(error) = $0 { error.description.contains("over its limit") } else { false } }
        }
        #expect(refused, "the flooder was not refused: \(mallory.events.suffix(3))")

        // The other session goes on.
        try ana.link.send("still here".bytes, to: .everyone, reliable: true)
        #expect(await ben.wait { $0.messages(reliable: true) == ["still here"] })
        try ben.link.sendOrdered("a proposal".bytes)
        #expect(await ana.wait { $0.ordered.count == 1 })

        // What the flooded session's stream holds: about the cap, not three times it.
        let connection = try await NATSConnection.connect(to: try NATSURL(parsing: nats.url))
        let jetStream = JetStream(connection: connection)
        let stored = try await jetStream.streamInfo(ClusterRelay.stream(for: flooded)).state.bytes
        await connection.close()
        #expect(stored > UInt64(Self.cap / 2), "the flood stored only \(stored) bytes")
        #expect(stored <= UInt64(Self.cap + 128 * 1024), "the flooded session's log holds \(stored) bytes, over its cap of \(Self.cap)")
    }
}

/// The cap on virtual time: relay cores in cluster mode fed one log (`ReplicaWorld`).
@Suite("Cluster session log cap, core")
struct ClusterLogCapCoreTests {
    static let cap = 64 * 1024

    /// The fault of the `error` frame `relay` sent `connection`, if any.
    static func fault(_ world: ReplicaWorld, _ relay: Int, _ connection: UInt64) -> RelayFault? {
        for case let .error(fault) in world.frames(relay, connection) { return fault }
        return nil
    }

    @Test("every relay counts a session's log alike; at the cap a sender on either relay is dropped, and another session goes on")
    func capOnEveryRelay() throws {
        var world = ReplicaWorld(relays: 2, sessionLogLimit: Self.cap)
        let flooded = SessionFixture()
        let calm = SessionFixture()
        _ = world.admit(flooded, on: 0, connection: 1, create: true)
        _ = world.admit(flooded, on: 1, connection: 1)
        _ = world.admit(calm, on: 0, connection: 2, create: true)
        _ = world.admit(calm, on: 1, connection: 2)
        let body = [UInt8](repeating: 7, count: 8 * 1024)
        var sent: UInt64 = 0
        while Self.fault(world, 0, 1) == nil, sent < 100 {
            sent += 1
            world.send(.message(sequence: sent, recipients: .everyone, reliable: true, body: body), from: 0, connection: 1, at: Int64(sent) * 1_000)
            world.pump(at: Int64(sent) * 1_000 + 500)
        }
        let fault = try #require(Self.fault(world, 0, 1), "no refusal after \(sent) messages")
        #expect(fault.code == .limitReached)
        #expect(fault.text.hasSuffix("is over its limit of \(Self.cap) bytes"), "\(fault.text)")
        // Refused before the log: what it holds stays within the cap, the same on both relays.
        let counted = try #require(world.cores[0].clusterLogBytes(of: flooded.id))
        #expect(counted <= Self.cap && counted > Self.cap - 2 * (body.count + 256))
        #expect(world.cores[1].clusterLogBytes(of: flooded.id) == counted)
        #expect(world.log.filter { $0.session == flooded.id }.map(\.encodedSizeEstimate).reduce(0, +) <= Self.cap)
        // The participant on the other relay is refused too.
        world.send(.message(sequence: 1, recipients: .everyone, reliable: true, body: body), from: 1, connection: 1, at: 200_000)
        #expect(Self.fault(world, 1, 1)?.code == .limitReached)
        // The other session is not touched.
        world.send(.message(sequence: 1, recipients: .everyone, reliable: true, body: Array("calm".utf8)), from: 0, connection: 2, at: 300_000)
        world.pump(at: 301_000)
        #expect(world.deliveries(1, 2) == ["calm"])
    }
}
