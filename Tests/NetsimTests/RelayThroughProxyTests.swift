import Foundation
import Synchronization
import TandemClock
import TandemNet
import TandemNetsim
import Testing

/// The real relay behind the proxy: clock probes and unreliable messages on UDP, the session on
/// TCP, all on the one port number that the proxy also listens on for both.
@Suite("The relay through the impairment proxy", .serialized)
struct RelayThroughProxyIOTests {
    static let millisecond: Int64 = 1_000_000

    @Test("a time-service sync through 10 ± 2 ms each way finds the shared clock")
    func clockSync() async throws {
        let relay = try RelayServer(address: try SocketAddress(host: "127.0.0.1", port: 0))
        relay.start()
        defer { relay.stop() }
        let proxy = try NetsimProxy(address: try SocketAddress(host: "127.0.0.1", port: 0), target: relay.address,
                                    impairment: Impairment(delay: 10 * Self.millisecond, jitter: 2 * Self.millisecond))
        proxy.start()
        defer { proxy.stop() }
        let clock = SystemClock()
        let prober = try ClockProber(server: proxy.address, clock: clock)
        prober.start()
        defer { prober.stop() }
        // Bounded: at most 10 s of 20 ms waits for the burst of probes to settle.
        for _ in 0..<500 where prober.sessionClock.estimate == nil {
            try await Task.sleep(for: .milliseconds(20))
        }
        let sessionTime = try #require(prober.sessionTime(), "no estimate through the proxy")
        // Relay and prober share CLOCK_MONOTONIC; symmetric delays leave at most the jitter as error.
        #expect(abs(sessionTime - clock.instant().nanoseconds) < 3 * Self.millisecond)
        let roundTrip = try #require(prober.sessionClock.estimator.bestRoundTrip)
        #expect(roundTrip >= 16 * Self.millisecond, "a probe's round trip took \(roundTrip) ns, less than the delays")
        let statistics = proxy.statistics
        #expect(statistics.up.datagramsDelivered > 0 && statistics.down.datagramsDelivered > 0)
    }

    @Test("two participants join a session and exchange reliable and unreliable messages through it")
    func sessionJoin() async throws {
        let relay = try RelayServer(address: try SocketAddress(host: "127.0.0.1", port: 0))
        relay.start()
        defer { relay.stop() }
        let proxy = try NetsimProxy(address: try SocketAddress(host: "127.0.0.1", port: 0), target: relay.address,
                                    impairment: Impairment(delay: 15 * Self.millisecond, jitter: 5 * Self.millisecond, asymmetry: 5 * Self.millisecond))
        proxy.start()
        defer { proxy.stop() }
        let connector = NetworkRelayConnector(host: "127.0.0.1", port: proxy.address.port)
        let session = UUID()
        let key = [UInt8](repeating: 3, count: 32)
        func request(_ name: String, create: Bool) -> RelayJoinRequest {
            RelayJoinRequest(sessionID: session, displayName: name, sessionKey: SigningKeyPair(seed: key),
                             createIfAbsent: create, activity: Array("netsim".utf8))
        }
        let alice = try await connector.join(request("alice", create: true))
        let bob = try await connector.join(request("bob", create: false))
        #expect(bob.welcome.participants.map(\.displayName) == ["alice", "bob"])
        let inbox = Inbox(bob.events)

        try alice.send(Array("reliable".utf8), to: .everyone, reliable: true)
        #expect(await inbox.wait { $0.contains("reliable/true") })
        // Unreliable messages go over UDP, which the link may still be opening: retry a bounded number of times.
        for _ in 0..<50 where !inbox.texts.contains("unreliable/false") {
            try alice.send(Array("unreliable".utf8), to: .everyone, reliable: false)
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(inbox.texts.contains("unreliable/false"))
        let statistics = proxy.statistics
        #expect(statistics.connectionsAccepted >= 2 && statistics.up.chunkBytesDelivered > 0 && statistics.down.chunkBytesDelivered > 0)
        #expect(statistics.up.datagramsDelivered > 0)
        await bob.leave()
        await alice.leave()
    }
}

/// Collects a link's messages as `body/reliable` texts, for a test to wait on.
final class Inbox: Sendable {
    private let received = Mutex<[String]>([])

    init(_ events: AsyncStream<RelayEvent>) {
        Task { [self] in
            for await event in events {
                if case let .message(_, body, reliable) = event {
                    received.withLock { $0.append("\(String(decoding: body, as: UTF8.self))/\(reliable)") }
                }
            }
        }
    }

    var texts: [String] { received.withLock { $0 } }

    /// Waits up to 10 s, in 10 ms steps, for `condition` over the texts so far.
    func wait(_ condition: ([String]) -> Bool) async -> Bool {
        for _ in 0..<1_000 {
            if condition(texts) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition(texts)
    }
}
