#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import TandemClock
import TandemNet

/// A UDP echo server on loopback with a thread of its own: it sends every datagram back to its
/// sender with the instant it received it appended (8 bytes, little-endian nanoseconds on the
/// monotonic clock that the test shares), so that the test can split a round trip into its two
/// one-way delays.
final class UDPEchoServer: Sendable {
    let socket: UDPSocket
    let address: SocketAddress
    private let running = Mutex(true)
    private let received = Mutex<[UInt64]>([])
    private let done = DispatchSemaphore(value: 0)

    init() throws {
        socket = try UDPSocket(boundTo: try SocketAddress(host: "127.0.0.1", port: 0))
        address = try socket.localAddress()
        let thread = Thread { [self] in
            serve()
            done.signal()
        }
        thread.start()
    }

    /// The first 8 bytes (a sequence number) of every datagram received, in arrival order.
    var sequences: [UInt64] { received.withLock { $0 } }

    func stop() {
        running.withLock { $0 = false }
        done.wait()
    }

    private func serve() {
        let clock = SystemClock()
        var buffer = [UInt8](repeating: 0, count: 2_048)
        // Bounded: the test stops it, and each wait lasts at most 10 ms.
        while running.withLock({ $0 }) {
            var entry = pollfd(fd: socket.descriptor, events: Int16(POLLIN), revents: 0)
            _ = try? SystemCall.run("poll") { poll(&entry, 1, 10) }
            while let (length, sender) = try? socket.receive(into: &buffer), let sender {
                let now = clock.instant().nanoseconds
                let datagram = Array(buffer[..<min(length, buffer.count)])
                if datagram.count >= 8 { received.withLock { $0.append(Wire.read(datagram, at: 0)) } }
                _ = try? socket.send(datagram + Wire.bytes(UInt64(bitPattern: now)), to: sender)
            }
        }
    }
}

/// A TCP echo server on loopback with a thread of its own: writes back every byte it reads, in
/// order, and ends its side of a stream when the client ends its own.
final class TCPEchoServer: @unchecked Sendable {
    let listener: TCPSocket
    let address: SocketAddress
    private let running = Mutex(true)
    private let done = DispatchSemaphore(value: 0)

    private final class Peer {
        let socket: TCPSocket
        var pending: [UInt8] = []
        var ended = false
        init(_ socket: TCPSocket) { self.socket = socket }
    }

    init() throws {
        listener = try TCPSocket.listening(on: try SocketAddress(host: "127.0.0.1", port: 0))
        address = try listener.localAddress()
        let thread = Thread { [self] in
            serve()
            done.signal()
        }
        thread.start()
    }

    func stop() {
        running.withLock { $0 = false }
        done.wait()
    }

    private func serve() {
        var peers: [Peer] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while running.withLock({ $0 }) {
            var entries = [pollfd(fd: listener.descriptor, events: Int16(POLLIN), revents: 0)]
            for peer in peers {
                let events = (peer.ended ? 0 : POLLIN) | (peer.pending.isEmpty ? 0 : POLLOUT)
                entries.append(pollfd(fd: peer.socket.descriptor, events: Int16(events), revents: 0))
            }
            _ = try? SystemCall.run("poll") { poll(&entries, nfds_t(entries.count), 10) }
            while let (socket, _) = try? listener.accept() { peers.append(Peer(socket)) }
            for peer in peers {
                while !peer.ended, let count = try? peer.socket.read(into: &buffer) {
                    if count == 0 { peer.ended = true } else { peer.pending += buffer[..<count] }
                }
                if !peer.pending.isEmpty, let written = try? peer.socket.write(peer.pending[...]) {
                    peer.pending.removeFirst(written)
                }
                if peer.ended && peer.pending.isEmpty { peer.socket.shutdownWrite() }
            }
            peers.removeAll { $0.ended && $0.pending.isEmpty }
        }
    }
}

/// Little-endian integers in byte arrays.
enum Wire {
    static func bytes(_ value: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }

    static func read(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[offset + $1]) << (8 * $1) }
    }
}
