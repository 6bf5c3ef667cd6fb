import Testing
import TandemClock
import TandemNet
import TandemTestKit
import TandemWire

@Suite struct TimeServiceIOTests {
    /// A session clock well away from the system clock, so that stamps from the wrong clock show.
    static let sessionClock = SkewedClock(base: SystemClock(), offset: 86_400_000_000_000, driftPPM: 50)

    static func withService(host: String = "127.0.0.1", _ body: (TimeService, LoopbackPeer) throws -> Void) throws {
        let service = try TimeService(clock: sessionClock, address: SocketAddress(host: host, port: 0))
        service.start()
        defer { service.stop() }
        try body(service, LoopbackPeer(service: service.localAddress))
    }

    static func probeAndReply(_ peer: LoopbackPeer, sequence: UInt32) throws -> TimeReply {
        let probe = ClockProbe(sequence: sequence, sendTime: 1_234_567_890 + Int64(sequence))
        let before = sessionClock.instant().nanoseconds
        try peer.send(TimeDatagram.request(probe).encoded())
        let bytes = try #require(try peer.receive(), "no reply from the time service")
        let after = sessionClock.instant().nanoseconds
        guard case let .reply(reply) = try TimeDatagram.decode(bytes) else {
            Issue.record("the service sent something other than a reply")
            throw WireError.unexpectedKind(bytes[1], context: "test")
        }
        #expect(reply.probe == probe)
        // Stamped with the injected session clock, in order, during the exchange.
        #expect(before <= reply.serverReceiveTime)
        #expect(reply.serverReceiveTime <= reply.serverSendTime)
        #expect(reply.serverSendTime <= after)
        return reply
    }

    /// The service's statistics once they stop changing (within a bounded wait).
    static func settledStatistics(of service: TimeService) -> TimeServiceStatistics {
        var last = service.statistics
        for _ in 0..<100 {
            pause(milliseconds: 5)
            let now = service.statistics
            if now == last { return now }
            last = now
        }
        return last
    }

    @Test(arguments: ["127.0.0.1", "::1"])
    func answersProbesWithTheInjectedClock(host: String) throws {
        try Self.withService(host: host) { service, peer in
            #expect(service.localAddress.port != 0)
            for sequence in UInt32(1)...5 { _ = try Self.probeAndReply(peer, sequence: sequence) }
            // The service counts a reply after sending it, so the count may trail the reply.
            #expect(Self.settledStatistics(of: service) == TimeServiceStatistics(answered: 5, ignored: 0))
        }
    }

    @Test func ignoresBadDatagramsAndKeepsAnswering() throws {
        try Self.withService { service, peer in
            var wrongVersion = TimeDatagram.request(ClockProbe(sequence: 9, sendTime: 9)).encoded()
            wrongVersion[2] = 99
            let reply = TimeDatagram.reply(TimeReply(probe: ClockProbe(sequence: 1, sendTime: 1), serverReceiveTime: 2, serverSendTime: 3))
            var random = SeededRandom(seed: 3)
            let bad: [[UInt8]] = [
                [0x54, 0x01, 0x01],                                        // short
                TimeDatagram.request(ClockProbe(sequence: 1, sendTime: 1)).encoded() + [UInt8](repeating: 7, count: 200), // long
                (0..<32).map { _ in UInt8.random(in: 0...255, using: &random) } , // garbage
                [UInt8](repeating: 0, count: 32),                          // zeros
                wrongVersion,
                reply.encoded(),                                           // a reply, not a request
                [],                                                        // empty
            ]
            for bytes in bad { try peer.send(bytes) }
            // Still answering, and only the good probe gets anything back.
            _ = try Self.probeAndReply(peer, sequence: 42)
            #expect(try peer.receive(timeout: 100_000_000) == nil)
            #expect(Self.settledStatistics(of: service) == TimeServiceStatistics(answered: 1, ignored: bad.count))
        }
    }

    @Test func stopsWhenAsked() throws {
        let service = try TimeService(clock: SystemClock(), address: SocketAddress(host: "127.0.0.1", port: 0))
        service.start()
        service.start()
        service.stop()
        service.stop()
        let peer = try LoopbackPeer(service: service.localAddress)
        try peer.send(TimeDatagram.request(ClockProbe(sequence: 1, sendTime: 1)).encoded())
        #expect(try peer.receive(timeout: 100_000_000) == nil)
    }
}
