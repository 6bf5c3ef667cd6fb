import Foundation
import Testing
import TandemClock
import TandemNet
import TandemWire

/// The kernel's socket timestamps on real loopback sockets: they arrive, and in the order the
/// stack takes them; and the relay's measuring mode turns a broadcast into a record with its
/// copies, all stamped.
@Suite struct RelayKernelTimestampsIOTests {
    /// A connected pair on loopback, the accepted end stamped before anything is written.
    private func stampedPair() throws -> (client: TCPSocket, server: TCPSocket) {
        let listener = try TCPSocket.listening(on: try SocketAddress(host: "127.0.0.1", port: 0))
        let client = try RawRelayClient(port: try listener.localAddress().port).socket
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            if let accepted = try listener.accept() {
                try SocketTimestamping.enable(accepted.socket.descriptor)
                return (client, accepted.socket)
            }
            Thread.sleep(forTimeInterval: 0.001)
        }
        throw SystemCallError(call: "accept", errno: ETIMEDOUT)
    }

    /// Writes four bytes on `client` and reads them on `server` until a read comes stamped; returns
    /// the stamp (nil if none within 5 s). The kernel turns receive stamping on for the whole
    /// system in deferred work the first time a socket asks for it, so the first bytes after that
    /// may arrive unstamped.
    private func stampedRead(_ client: TCPSocket, _ server: TCPSocket) throws -> KernelStamp? {
        var buffer = [UInt8](repeating: 0, count: 64)
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            _ = try client.write([1, 2, 3, 4][...])
            var received: (count: Int, arrival: KernelStamp?)?
            while received == nil, ContinuousClock.now < deadline {
                received = try SocketTimestamping.receive(server.descriptor, into: &buffer)
                if received == nil { Thread.sleep(forTimeInterval: 0.001) }
            }
            #expect(received.map { $0.count > 0 && $0.count % 4 == 0 } ?? true)
            if let arrival = received?.arrival { return arrival }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return nil
    }

    @Test func receiveThenSchedulerThenDeviceInOrder() throws {
        let (client, server) = try stampedPair()
        let arrival = try #require(try stampedRead(client, server), "no read came stamped within 5 s")
        let deadline = ContinuousClock.now + .seconds(5)

        var ledger = RelayTimestampLedger()
        let record = ledger.arrive(at: arrival)
        // Two writes: bytes 0…9 and 10…29; the copy is the second.
        #expect(try server.write([UInt8](repeating: 7, count: 10)[...]) == 10)
        #expect(try server.write([UInt8](repeating: 8, count: 20)[...]) == 20)
        ledger.send(record: record, stream: 0, lastByte: 29)
        let reader = SocketTimestamping()
        var stamps = 0
        while stamps < 4, ContinuousClock.now < deadline {
            stamps += try reader.drain(server.descriptor, stream: 0, into: &ledger)
            if stamps < 4 { Thread.sleep(forTimeInterval: 0.001) }
        }
        #expect(stamps == 4)
        let scheduled = try #require(ledger.delays(to: .scheduled).perSend.first)
        let sent = try #require(ledger.delays(to: .sent).perSend.first)
        #expect(scheduled >= .zero)
        #expect(sent >= scheduled)
        // A software clock: real instants of this era, not zeros.
        #expect(arrival.nanoseconds > 1_500_000_000 * 1_000_000_000)
    }

    @Test func theRelaysMeasuringModeStampsEachCopyOfABroadcast() throws {
        // Receive stamping on for the system before the relay's first frame (see `stampedRead`).
        let (warmClient, warmServer) = try stampedPair()
        _ = try #require(try stampedRead(warmClient, warmServer), "no read came stamped within 5 s")
        let server = try RelayServer(address: try SocketAddress(host: "127.0.0.1", port: 0))
        server.measureKernelTimestamps()
        server.start()
        defer { server.stop(drainTimeout: .zero) }
        let session = UUID()
        let key = [UInt8](repeating: 9, count: 32)
        let clients = try (0..<3).map { _ in try RawRelayClient(port: server.port) }
        for (index, client) in clients.enumerated() { try client.admit(session: session, key: key, create: index == 0, name: "p\(index)") }
        let before = try #require(server.takeKernelTimestamps())
        #expect(before.failures == 0)
        try clients[0].send(RelayFrame.message(sequence: 1, recipients: .everyone, reliable: true, body: [1, 2, 3]).encoded())
        for client in clients.dropFirst() {
            var delivered = false
            while !delivered, let frame = try client.nextFrame() {
                if case .delivery = frame { delivered = true }
            }
            #expect(delivered)
        }
        // The error queues are read after the pass that wrote the copies, which the loop has
        // finished by the time it answers.
        let taken = try #require(server.takeKernelTimestamps())
        #expect(taken.ledger.records == 1)
        #expect(taken.ledger.copies == 2)
        let sent = taken.ledger.delays(to: .sent)
        let scheduled = taken.ledger.delays(to: .scheduled)
        #expect(sent.unmatched == 0 && scheduled.unmatched == 0)
        #expect(sent.perSend.count == 2 && sent.lastSend.count == 1)
        #expect(scheduled.perSend.allSatisfy { $0 >= .zero })
        #expect(zip(scheduled.perSend, sent.perSend).allSatisfy { $0 <= $1 })
        #expect(sent.lastSend.first == sent.perSend.max())
        #expect(taken.drainTime > .zero)
        // The two deliveries at least, each its own write to its own connection.
        #expect(taken.framesQueued >= 2)
        #expect(taken.ledger.stampCount(.sent) >= 2)
        #expect(server.loopThreadID().map { SocketTimestamping.cpuTime(ofThread: $0) != nil } == true)
    }
}
