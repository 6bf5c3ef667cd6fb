#if canImport(Glibc)
import Glibc
#endif
import TandemClock
import TandemNet
import TandemNetsim
import Testing

/// The proxy on real loopback sockets, between real clients and echo servers. The bounds are
/// loose on purpose (the machine is shared): they check that the proxy adds what it is asked to
/// and never less, not how fast this machine is.
@Suite("Impairment proxy on loopback", .serialized)
struct NetsimProxyIOTests {
    static let millisecond: Int64 = 1_000_000
    /// What a busy shared machine may add on top of the asked delay, at the median.
    static let slack: Int64 = 8 * millisecond

    static func proxy(to target: SocketAddress, _ impairment: Impairment, seed: UInt64 = 1) throws -> NetsimProxy {
        let proxy = try NetsimProxy(address: try SocketAddress(host: "127.0.0.1", port: 0), target: target, impairment: impairment, seed: seed)
        proxy.start()
        return proxy
    }

    @Test("UDP: 20 ± 5 ms each way, never early, the median within the band")
    func udpDelay() throws {
        let echo = try UDPEchoServer()
        defer { echo.stop() }
        let proxy = try Self.proxy(to: echo.address, Impairment(delay: 20 * Self.millisecond, jitter: 5 * Self.millisecond))
        defer { proxy.stop() }
        let probes = try ProbeClient(to: proxy.address).run(count: 400, spacing: 2 * Self.millisecond)
        let ups = probes.compactMap(\.up)
        let downs = probes.compactMap(\.down)
        #expect(ups.count == 400 && downs.count == 400, "nothing may be lost without --loss")
        for (name, delays) in [("up", ups), ("down", downs)] {
            #expect(delays.min()! >= 15 * Self.millisecond, "\(name): a datagram left before its time")
            let middle = median(delays)!
            #expect(middle >= 15 * Self.millisecond && middle <= 25 * Self.millisecond + Self.slack, "\(name) median \(middle) ns")
        }
        let statistics = proxy.statistics
        #expect(statistics.up.datagramsDelivered == 400 && statistics.down.datagramsDelivered == 400)
        #expect(statistics.datagramClients == 1)
        #expect(statistics.lateness.count == 800)
    }

    @Test("UDP: the asymmetry slows the downstream only")
    func udpAsymmetry() throws {
        let echo = try UDPEchoServer()
        defer { echo.stop() }
        let proxy = try Self.proxy(to: echo.address, Impairment(delay: 10 * Self.millisecond, asymmetry: 15 * Self.millisecond))
        defer { proxy.stop() }
        let probes = try ProbeClient(to: proxy.address).run(count: 100, spacing: 3 * Self.millisecond)
        let up = try #require(median(probes.compactMap(\.up)))
        let down = try #require(median(probes.compactMap(\.down)))
        #expect(up >= 10 * Self.millisecond && up <= 10 * Self.millisecond + Self.slack)
        #expect(down >= 25 * Self.millisecond && down <= 25 * Self.millisecond + Self.slack)
    }

    @Test("UDP: 10 % loss each way and 10 % held back, over 2,000 datagrams")
    func udpLossAndReorder() throws {
        let echo = try UDPEchoServer()
        defer { echo.stop() }
        let impairment = Impairment(delay: 2 * Self.millisecond, loss: 0.1, reorder: 0.1, reorderHold: 10 * Self.millisecond)
        let proxy = try Self.proxy(to: echo.address, impairment, seed: 5)
        defer { proxy.stop() }
        let count = 2_000
        let probes = try ProbeClient(to: proxy.address).run(count: count, spacing: Self.millisecond / 2)
        let arrivedUp = Set(echo.sequences).count
        let arrivedBack = probes.filter { $0.receiveTime != nil }.count
        // Five standard deviations of the binomial counts.
        let upDeviation = (Double(count) * 0.1 * 0.9).squareRoot()
        #expect(abs(Double(count - arrivedUp) - 0.1 * Double(count)) < 5 * upDeviation, "lost upstream: \(count - arrivedUp)")
        let downDeviation = (Double(arrivedUp) * 0.1 * 0.9).squareRoot()
        #expect(abs(Double(arrivedUp - arrivedBack) - 0.1 * Double(arrivedUp)) < 5 * downDeviation, "lost downstream: \(arrivedUp - arrivedBack)")
        let statistics = proxy.statistics
        #expect(statistics.up.datagrams == count)
        #expect(statistics.up.datagramsLost == count - arrivedUp, "the proxy's count of losses is the server's")
        #expect(statistics.up.datagramsLost + statistics.up.datagramsDelivered == count)
        // The server sees held-back datagrams arrive after later ones, as the proxy counted.
        var highest: UInt64 = 0
        var outOfOrder = 0
        for sequence in echo.sequences {
            if sequence < highest { outOfOrder += 1 } else { highest = sequence }
        }
        #expect(outOfOrder == statistics.up.datagramsReordered)
        #expect(outOfOrder > 100 && outOfOrder <= statistics.up.datagramsHeldBack)
    }

    @Test("TCP: every byte comes back in order, each round trip at least twice the delay")
    func tcpEcho() throws {
        let echo = try TCPEchoServer()
        defer { echo.stop() }
        let proxy = try Self.proxy(to: echo.address, Impairment(delay: 20 * Self.millisecond, jitter: 5 * Self.millisecond, loss: 0.5, reorder: 0.5))
        defer { proxy.stop() }
        let client = try BlockingStream(to: proxy.address)
        let clock = SystemClock()

        // Ping-pong: one small message at a time, so each round trip is two delays.
        var roundTrips: [Int64] = []
        for index in 0..<10 {
            let message = [UInt8](repeating: UInt8(index), count: 100)
            let start = clock.instant().nanoseconds
            try client.write(message)
            #expect(try client.read(count: message.count) == message)
            roundTrips.append(clock.instant().nanoseconds - start)
        }
        #expect(roundTrips.min()! >= 30 * Self.millisecond)
        #expect(median(roundTrips)! <= 50 * Self.millisecond + 2 * Self.slack)

        // Bulk: 2 MiB written in uneven pieces while the echo streams back, compared byte by byte.
        let total = 2 * 1024 * 1024
        let pattern = (0..<total).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) }
        let echoed = try client.exchange(pattern, pieceSizes: [1, 7_000, 65_536, 300, 20_000])
        #expect(echoed.count == total)
        #expect(echoed == pattern, "first difference at \(zip(echoed, pattern).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? -1)")

        // Ending the stream ends the echo's, through the proxy both ways.
        client.shutdownWrite()
        #expect(try client.readToEnd().isEmpty)
        let statistics = proxy.statistics
        #expect(statistics.up.chunkBytesDelivered == total + 1_000)
        #expect(statistics.down.chunkBytesDelivered == total + 1_000)
        #expect(statistics.up.datagrams == 0 && statistics.connectionsAccepted == 1)
    }

    @Test("TCP: a target that refuses ends the client's connection")
    func tcpRefused() throws {
        // A port with nothing listening: bind one, note it, close it.
        let unused = try TCPSocket.listening(on: try SocketAddress(host: "127.0.0.1", port: 0)).localAddress()
        let proxy = try Self.proxy(to: unused, Impairment(delay: Self.millisecond))
        defer { proxy.stop() }
        let client = try BlockingStream(to: proxy.address)
        #expect((try? client.readToEnd()) != nil)
        #expect(proxy.statistics.connectionsFailed == 1)
    }

    @Test("an impossible impairment is refused before anything binds")
    func impossible() throws {
        let target = try SocketAddress(host: "127.0.0.1", port: 9)
        #expect { try NetsimProxy(address: try SocketAddress(host: "127.0.0.1", port: 0), target: target, impairment: Impairment(delay: 1, jitter: 2)) }
            throws: { ($0 as? NetsimError)?.isImpossibleImpairment == true }
    }
}
