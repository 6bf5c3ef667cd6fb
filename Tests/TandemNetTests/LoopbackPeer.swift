#if canImport(Glibc)
import Glibc
#endif
import TandemNet
import TandemWire
import Testing

/// A bare UDP socket on loopback that talks to a time service the way a test wants to:
/// well-formed probes, or any bytes at all.
struct LoopbackPeer {
    let socket: UDPSocket
    let service: SocketAddress

    init(service: SocketAddress) throws {
        self.service = service
        socket = try UDPSocket(family: service.family)
    }

    func send(_ bytes: [UInt8]) throws {
        #expect(try socket.send(bytes, to: service))
    }

    /// The next datagram, waiting at most `timeout` nanoseconds in bounded steps; nil if none came.
    func receive(timeout: Int64 = 2_000_000_000) throws -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 256)
        let step: Int32 = 10
        for _ in 0..<Int(timeout / (Int64(step) * 1_000_000)) {
            if let (length, _) = try socket.receive(into: &buffer) { return Array(buffer[..<min(length, buffer.count)]) }
            var entry = pollfd(fd: socket.descriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&entry, 1, step)
        }
        return nil
    }
}
