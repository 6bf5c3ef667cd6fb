#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TandemClock
@testable import TandemNet
import Testing

/// One datagram to many addresses in batched system calls (`UDPSocket.send(_:toEach:)`, what
/// the relay's datagram fan-out uses), on real loopback sockets.
@Suite("Datagram fan-out")
struct DatagramFanoutIOTests {
    /// Reads what `socket` received within `timeout` nanoseconds, at most `limit` datagrams.
    private static func drain(_ socket: UDPSocket, limit: Int, timeout: Int64 = 2_000_000_000) throws -> [[UInt8]] {
        var buffer = [UInt8](repeating: 0, count: 2_048)
        var received: [[UInt8]] = []
        let deadline = SystemClock().instant().nanoseconds + timeout
        while received.count < limit, SystemClock().instant().nanoseconds < deadline {
            if let datagram = try socket.receive(into: &buffer) {
                received.append(Array(buffer[..<datagram.length]))
            } else {
                var entry = pollfd(fd: socket.descriptor, events: Int16(POLLIN), revents: 0)
                _ = poll(&entry, 1, 20)
            }
        }
        return received
    }

    @Test("150 readers, more than two batches: each gets the datagram once, whole")
    func eachReaderGetsItOnce() throws {
        let sender = try UDPSocket(boundTo: SocketAddress(host: "127.0.0.1", port: 0))
        let readers = try (0..<150).map { _ in try UDPSocket(boundTo: SocketAddress(host: "127.0.0.1", port: 0)) }
        let payload = (0..<1_200).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        #expect(readers.count > 2 * UDPSocket.sendBatch)
        let sent = try sender.send(payload, toEach: readers.map { try $0.localAddress() })
        #expect(sent == readers.count)
        for reader in readers {
            let received = try Self.drain(reader, limit: 2, timeout: 100_000_000)
            #expect(received == [payload])
        }
    }

    @Test("an address the kernel refuses loses only its own datagram; the others in its batch and after it get theirs")
    func aRefusedAddressLosesOnlyItsOwn() throws {
        let sender = try UDPSocket(boundTo: SocketAddress(host: "127.0.0.1", port: 0))
        let readers = try (0..<10).map { _ in try UDPSocket(boundTo: SocketAddress(host: "127.0.0.1", port: 0)) }
        var addresses = try readers.map { try $0.localAddress() }
        // An IPv6 address on an IPv4 socket: refused by the kernel, in the middle of the batch.
        addresses.insert(try SocketAddress(host: "::1", port: 9), at: 4)
        let sent = try sender.send([1, 2, 3], toEach: addresses)
        #expect(sent == readers.count)
        for reader in readers {
            #expect(try Self.drain(reader, limit: 2, timeout: 100_000_000) == [[1, 2, 3]])
        }
        // Alone, the refusal is the caller's to see.
        #expect(throws: SystemCallError.self) { try sender.send([1], toEach: [try SocketAddress(host: "::1", port: 9)]) }
    }
}
