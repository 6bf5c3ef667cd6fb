import Foundation
import TandemClock
import TandemNet
import TandemTestKit
import TandemWire
import Testing

/// Bad input on the real relay: the offender gets a clear error and is disconnected, and a
/// session in progress goes on exchanging messages.
@Suite("Relay bad input", .serialized)
struct BadInputIOTests {
    /// A relay with a session of two that must keep working.
    private func withSession(_ configuration: RelayCoreConfiguration = RelayHarness.testConfiguration,
                             kind: TransportKind = .network,
                             _ body: (RelayHarness, Member, Member) async throws -> Void) async throws {
        let harness = try RelayHarness(kind, configuration: configuration)
        defer { harness.shutdown() }
        let session = UUID()
        let alice = try await harness.join(session, "alice", create: true)
        let bob = try await harness.join(session, "bob")
        try await body(harness, alice, bob)
        try alice.link.send(Array("still fine".utf8), to: .everyone, reliable: true)
        try bob.link.send(Array("still fine".utf8), to: .everyone, reliable: false)
        // Spam that arrived before the offender was dropped may precede it.
        #expect(await bob.recorder.wait { _ in bob.recorder.messages(reliable: true).contains("still fine") })
        #expect(await alice.recorder.wait { _ in alice.recorder.messages(reliable: false) == ["still fine"] })
    }

    /// A hello in `version` gets one refusal written in that version, naming both versions.
    private func expectVersionRefused(_ version: UInt8, port: UInt16) throws {
        let client = try RawRelayClient(port: port)
        try client.send(rawFrame(version: version, type: 0x01, payload: [1, 2, 3]))
        let (bytes, closed) = client.bytesUntilClosed()
        #expect(closed, "the relay closes the connection")
        let text = "relay speaks protocol v\(RelayFrame.version), this tandem speaks v\(version)"
        #expect(bytes.count == 9 + text.utf8.count, "\(bytes)")
        guard bytes.count >= 9 else { return }
        #expect(bytes[4] == version && bytes[5] == 0x07 && bytes[6] == RelayFaultCode.versionMismatch.rawValue)
        #expect(String(decoding: bytes[9...], as: UTF8.self) == text)
    }

    private func expectDropped(_ bytes: [UInt8], port: UInt16, mentioning word: String) throws {
        let client = try RawRelayClient(port: port)
        try client.send(bytes)
        let (frames, closed) = client.framesUntilClosed()
        #expect(closed, "the relay closes the offender's connection")
        guard case let .error(fault)? = frames.last else {
            Issue.record("expected an error frame, got \(frames)")
            return
        }
        #expect(fault.code == .protocolViolation)
        #expect(fault.text.contains(word), "\(fault.text)")
    }

    @Test("malformed, oversized and unknown-version frames")
    func malformedFrames() async throws {
        try await withSession { harness, _, _ in
            let port = try #require(harness.server).port
            try expectDropped(rawFrame(type: 0xEE, payload: [1, 2, 3]), port: port, mentioning: "unknown type")
            try expectDropped([0xFF, 0xFF, 0xFF, 0xF0], port: port, mentioning: "over the limit")
            try expectVersionRefused(RelayFrame.version + 1, port: port)
            try expectVersionRefused(2, port: port)
            try expectVersionRefused(3, port: port)
            // Every version this build no longer speaks, the newest of them included.
            for version in 4..<RelayFrame.version { try expectVersionRefused(version, port: port) }
            // A proposal whose retention byte names nothing (1, 2 and 0 do).
            try expectDropped(rawFrame(type: 0x17, payload: [0, 0, 0, 0, 0, 0, 0, 1, 7, 0, 0, 0, 0]), port: port,
                              mentioning: "retention 7")
            try expectDropped(rawFrame(type: 0x01, payload: [0, 1, 2]), port: port, mentioning: "truncated")
            try expectDropped(RelayFrame.message(sequence: 1, recipients: .everyone, reliable: true, body: [1]).encoded(),
                              port: port, mentioning: "expected a hello")
            var hello = RelayFrame.hello(RelayHello(
                sessionID: UUID(), participant: TestIdentities.entry(TestIdentities.make(), "x"), create: true,
                activity: [], resume: false, received: 0)).encoded()
            hello.append(0)
            hello[3] += 1
            try expectDropped(hello, port: port, mentioning: "left over")
        }
    }

    @Test("a snapshot that reflects its own order or a later one: the proposer is dropped, the session goes on")
    func snapshotPastItself() async throws {
        try await withSession { harness, alice, _ in
            let port = try #require(harness.server).port
            try alice.link.sendOrdered([1], retention: .playback)
            #expect(await alice.recorder.wait { _ in alice.recorder.events.ordered.count == 1 })
            let raw = try RawRelayClient(port: port)
            defer { raw.socket.shutdown() }
            try raw.admit(session: alice.link.welcome.sessionID, key: RelayHarness.key, create: false)
            // Order 1 is alice's; this one would be order 2, so it cannot reflect 2.
            try raw.send(RelayFrame.proposal(sequence: 1, retention: .snapshot(reflecting: 2), body: [9]).encoded())
            let (frames, closed) = raw.framesUntilClosed()
            #expect(closed, "the relay closes the offender's connection")
            guard case let .error(fault)? = frames.last else {
                Issue.record("expected an error frame, got \(frames)")
                return
            }
            #expect(fault.code == .protocolViolation)
            #expect(fault.text == "a snapshot at order 2 cannot reflect order 2")
            // Nothing was ordered for it: the next record is order 2.
            try alice.link.sendOrdered([2], retention: .snapshot(reflecting: 1))
            #expect(await alice.recorder.wait { _ in alice.recorder.events.ordered.count == 2 })
            #expect(alice.recorder.events.ordered.map(\.order) == [1, 2])
            #expect(alice.recorder.events.ordered.map(\.retention) == [.playback, .snapshot(reflecting: 1)])
        }
    }

    @Test("a wrong secret on the wire learns nothing about the session")
    func wrongSecretOnTheWire() async throws {
        try await withSession { harness, alice, _ in
            let client = try RawRelayClient(port: try #require(harness.server).port)
            let session = alice.link.welcome.sessionID
            try client.send(RelayFrame.hello(RelayHello(
                sessionID: session, participant: TestIdentities.entry(TestIdentities.make(), "mallory"), create: false,
                activity: [], resume: false, received: 0)).encoded())
            try client.send(RelayFrame.proof(sessionSignature: [UInt8](repeating: 1, count: 64),
                                             participantSignature: [UInt8](repeating: 1, count: 64)).encoded())
            let (frames, closed) = client.framesUntilClosed()
            #expect(closed)
            #expect(frames.count == 2)
            guard case let .refusal(fault)? = frames.last else {
                Issue.record("expected a refusal, got \(frames)")
                return
            }
            #expect(fault.code == .wrongSecret)
        }
    }

    @Test("a flood from one participant: it is dropped, the others go on", arguments: TransportKind.allCases)
    func flood(kind: TransportKind) async throws {
        var configuration = RelayHarness.testConfiguration
        configuration.floodRate = 200
        configuration.floodBurst = 400
        try await withSession(configuration, kind: kind) { harness, alice, bob in
            let mallory = try await harness.join(alice.link.welcome.sessionID, "mallory")
            // Bounded: well over the burst, sent as fast as the link takes them.
            for index in 0..<3_000 {
                do {
                    try mallory.link.send(Array("spam \(index)".utf8), to: .everyone, reliable: true)
                } catch {
                    break
                }
            }
            #expect(await mallory.recorder.waitForFinish())
            #expect(mallory.recorder.events.failure?.code == .disconnected)
            #expect(mallory.recorder.events.failure?.detail.contains("frames a second") == true)
            #expect(await alice.recorder.wait { $0.leftIDs == [mallory.id] })
            #expect(await bob.recorder.wait { $0.leftIDs == [mallory.id] })
        }
    }

    @Test("time probes are answered on the relay's port, between relay traffic")
    func timeProbes() async throws {
        try await withSession { harness, _, _ in
            let server = try #require(harness.server)
            let socket = try UDPSocket(family: AF_INET)
            try socket.connect(to: server.address)
            try socket.send(TimeDatagram.request(ClockProbe(sequence: 42, sendTime: 1_000)).encoded())
            // Junk on the same port is ignored.
            try socket.send([0x54, 0x7F, 1, 0, 1, 2])
            var buffer = [UInt8](repeating: 0, count: 64)
            let deadline = ContinuousClock.now + .seconds(5)
            var reply: TimeDatagram?
            while reply == nil, ContinuousClock.now < deadline {
                if let (length, _) = try socket.receive(into: &buffer) {
                    reply = try TimeDatagram.decode(buffer[..<length])
                } else {
                    try await Task.sleep(for: .milliseconds(2))
                }
            }
            guard case let .reply(answer)? = reply else {
                Issue.record("no time reply")
                return
            }
            #expect(answer.probe.sequence == 42)
            #expect(answer.serverSendTime >= answer.serverReceiveTime)
            #expect(server.statistics.timeRequestsAnswered == 1)
        }
    }

    @Test("IPv6 loopback works as IPv4 does")
    func ipv6() async throws {
        guard let address = try? SocketAddress(host: "::1", port: 0), let server = try? RelayServer(address: address) else {
            // A machine without IPv6 on loopback cannot run this case.
            return
        }
        server.start()
        defer { server.stop() }
        #expect(server.address.family == AF_INET6)
        let connector = NetworkRelayConnector(host: "::1", port: server.port)
        let session = UUID()
        let alice = Member(link: try await connector.join(RelayHarness.request(session, "alice", create: true)))
        let bob = Member(link: try await connector.join(RelayHarness.request(session, "bob")))
        try alice.link.send(Array("v6".utf8), to: .everyone, reliable: true)
        try alice.link.send(Array("v6 datagram".utf8), to: .everyone, reliable: false)
        #expect(await bob.recorder.waitForMessages(2).sorted() == ["v6", "v6 datagram"])
    }
}
