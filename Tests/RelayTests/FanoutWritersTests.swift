#if canImport(Glibc)
import Glibc
#endif
import Foundation
@testable import TandemNet
import TandemWire
import Testing

/// Issue 12's latency targets: a large broadcast's writes shared by two threads
/// (`RelayServer(writerThreads: 2)`, `tandem serve --writer-threads 2`), through real sockets on
/// loopback. Every frame still reaches every reader once, in order, and a connection that does
/// not read is still dropped while the others lose nothing.
@Suite("Relay server: fan-out over two writer threads")
struct FanoutWritersIOTests {
    private let key = [UInt8](repeating: 9, count: 32)

    /// A relay whose caps would otherwise pace or cut the test's own load (one address, a fast
    /// sender, many deliveries); the output queue's frame cap is `outputFrames`.
    private func relay(outputFrames: Int = 40_000) throws -> RelayServer {
        var configuration = RelayCoreConfiguration()
        configuration.maximumConnectionsPerAddress = 1_000
        configuration.floodRate = 1_000_000
        configuration.floodBurst = 1_000_000
        configuration.fanoutDeliveriesPerSecond = 1e9
        configuration.fanoutBytesPerSecond = 1e12
        configuration.maximumOutputFrames = outputFrames
        let server = try RelayServer(address: SocketAddress(host: "127.0.0.1", port: 0), configuration: configuration, writerThreads: 2)
        server.start()
        return server
    }

    /// A message body that names its index, `size` bytes long.
    private static func body(_ index: Int, size: Int) -> [UInt8] {
        var body = [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: max(size, 4))
        for shift in 0..<4 { body[shift] = UInt8(truncatingIfNeeded: index >> (24 - 8 * shift)) }
        return body
    }

    private static func index(of body: [UInt8]) -> Int? {
        guard body.count >= 4 else { return nil }
        return body[0..<4].reduce(0) { $0 << 8 | Int($1) }
    }

    /// Reads `reader` until it has `count` more deliveries (other frames skipped), acknowledges
    /// the last, and gives their indices.
    private static func deliveries(_ reader: RawRelayClient, count: Int) throws -> [Int] {
        var indices: [Int] = []
        var last: UInt64?
        // Bounded: pings and acknowledgements are few; a missing delivery fails the wait.
        while indices.count < count {
            guard let frame = try reader.nextFrame(timeout: .seconds(10)) else { break }
            if case let .delivery(sequence, _, _, body) = frame, let index = index(of: body) {
                indices.append(index)
                last = sequence
            }
        }
        if let last { try reader.send(RelayFrame.ack(last).encoded()) }
        return indices
    }

    /// Reads whatever waits for `client` without waiting (the sender's acknowledgements), so that
    /// it is not itself a connection that does not read.
    private static func discardWaiting(_ client: RawRelayClient) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        for _ in 0..<64 {
            guard let count = try? client.socket.read(into: &buffer), count > 0 else { return }
        }
    }

    /// Joins `count` readers to `session` on `server`.
    private func joinReaders(_ count: Int, of session: UUID, on server: RelayServer) throws -> [RawRelayClient] {
        try (0..<count).map { index in
            let reader = try RawRelayClient(port: server.port)
            try reader.admit(session: session, key: key, create: false, name: "r\(index)")
            return reader
        }
    }

    /// Broadcasts `count` messages of `size` bytes from `sender` (numbered on from `next`), then
    /// reads them at every reader, adding their indices to `received`.
    private static func round(_ count: Int, size: Int, from sender: RawRelayClient, next: inout Int,
                              to readers: [RawRelayClient], received: inout [[Int]]) throws {
        var round: [UInt8] = []
        for _ in 0..<count {
            next += 1
            round += RelayFrame.message(sequence: UInt64(next), recipients: .everyone, reliable: true, body: body(next, size: size)).encoded()
        }
        try sender.send(round)
        discardWaiting(sender)
        for (slot, reader) in readers.enumerated() { received[slot] += try deliveries(reader, count: count) }
    }

    /// The second writers' threads of this process that are running.
    private static func writerThreads() -> Int { RelayFanoutWriter.running.load(ordering: .relaxed) }

    @Test("stop() ends the second writer's thread; a relay dropped unstarted leaves none")
    func stopEndsTheWriter() throws {
        let before = Self.writerThreads()
        let server = try relay()
        let deadline = ContinuousClock.now + .seconds(5)
        while Self.writerThreads() == before, ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(Self.writerThreads() == before + 1, "the writer's thread runs, by its name")
        server.stop()
        #expect(Self.writerThreads() == before)
        do { _ = try RelayServer(address: SocketAddress(host: "127.0.0.1", port: 0), writerThreads: 2) }
        #expect(Self.writerThreads() == before)
    }

    @Test("a broadcast to 40 readers over two writers reaches every reader once, in order")
    func everyFrameInOrder() throws {
        let server = try relay()
        defer { server.stop() }
        let session = UUID()
        let sender = try RawRelayClient(port: server.port)
        try sender.admit(session: session, key: key, create: true, name: "sender")
        let readers = try joinReaders(40, of: session, on: server)
        var received = [[Int]](repeating: [], count: readers.count)
        var next = 0
        // 10 rounds of 20 broadcasts, each round read by everyone before the next is sent.
        for _ in 0..<10 { try Self.round(20, size: 64, from: sender, next: &next, to: readers, received: &received) }
        for (slot, indices) in received.enumerated() {
            #expect(indices == Array(1...next), "reader \(slot) got \(indices.count) of \(next), or out of order")
        }
        // The shared path ran (the statistics are brought up to date on the relay's tick).
        let deadline = ContinuousClock.now + .seconds(5)
        while server.statistics.sharedFlushes == 0, ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.02) }
        #expect(server.statistics.sharedFlushes > 0)
        #expect(server.statistics.limits.outputQueue == 0, "nobody was dropped")
    }

    @Test("a connection that does not read is dropped over two writers; the 20 others get everything, in order")
    func nonReaderDropped() throws {
        // At most 200 frames waiting in the relay for one connection.
        let server = try relay(outputFrames: 200)
        defer { server.stop() }
        let session = UUID()
        let sender = try RawRelayClient(port: server.port)
        try sender.admit(session: session, key: key, create: true, name: "sender")
        // The silent one's receive buffer is small, so that the relay's queue for it fills soon.
        let silentSocket = try TCPSocket(family: AF_INET)
        var small: Int32 = 4096
        _ = setsockopt(silentSocket.descriptor, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        let silent = try RawRelayClient(socket: silentSocket, connectingTo: SocketAddress(host: "127.0.0.1", port: server.port))
        try silent.admit(session: session, key: key, create: false, name: "silent")
        let readers = try joinReaders(20, of: session, on: server)
        var received = [[Int]](repeating: [], count: readers.count)
        var next = 0
        var roundsAfterDrop = 0
        // Rounds of 16 broadcasts of 8 KiB, each read by every reader before the next: at most
        // 150 rounds (about 19 MiB to each), and 5 more once the silent one is dropped.
        for _ in 0..<150 where roundsAfterDrop < 5 {
            try Self.round(16, size: 8 * 1024, from: sender, next: &next, to: readers, received: &received)
            if server.statistics.limits.outputQueue > 0 { roundsAfterDrop += 1 }
        }
        #expect(server.statistics.limits.outputQueue == 1, "the silent connection, and only it, was dropped for its output queue")
        for (slot, indices) in received.enumerated() {
            #expect(indices == Array(1...next), "reader \(slot) got \(indices.count) of \(next), or out of order")
        }
        // What reached the silent one before the cut is a prefix, in order.
        let (frames, closed) = silent.framesUntilClosed(timeout: .seconds(10))
        #expect(closed, "the silent connection was not closed")
        let got = frames.compactMap { if case let .delivery(_, _, _, body) = $0 { Self.index(of: body) } else { nil } }
        #expect(got == (0..<got.count).map { $0 + 1 })
        #expect(got.count < next)
    }
}
