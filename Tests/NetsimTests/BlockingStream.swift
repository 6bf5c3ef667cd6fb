#if canImport(Glibc)
import Glibc
#endif
import TandemClock
import TandemNet

/// A TCP client for tests: waits (with `poll`, up to a deadline) where the socket would block.
struct BlockingStream {
    struct TimedOut: Error {}

    let socket: TCPSocket
    let clock = SystemClock()
    /// How long any one call may wait in all.
    let limit: Int64 = 20_000_000_000

    init(to address: SocketAddress) throws {
        socket = try TCPSocket(family: address.family)
        if !(try socket.connect(to: address)) {
            try wait(POLLOUT, until: clock.instant().nanoseconds + limit)
            guard socket.pendingError() == 0 else { throw SystemCallError(call: "connect", errno: socket.pendingError()) }
        }
    }

    func write(_ bytes: [UInt8]) throws {
        _ = try exchange(bytes, pieceSizes: [bytes.count], expecting: 0)
    }

    func read(count: Int) throws -> [UInt8] {
        try exchange([], pieceSizes: [1], expecting: count)
    }

    /// Writes `bytes` in pieces of the given sizes (cycling) while reading, until as many bytes as
    /// `expecting` (by default all of them) have come back.
    func exchange(_ bytes: [UInt8], pieceSizes: [Int], expecting: Int? = nil) throws -> [UInt8] {
        let wanted = expecting ?? bytes.count
        var written = 0
        var piece = 0
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let deadline = clock.instant().nanoseconds + limit
        while written < bytes.count || received.count < wanted {
            let events = (written < bytes.count ? POLLOUT : 0) | (received.count < wanted ? POLLIN : 0)
            try wait(events, until: deadline)
            if written < bytes.count {
                let end = min(bytes.count, written + pieceSizes[piece % pieceSizes.count])
                if let count = try socket.write(bytes[written..<end]) {
                    written += count
                    piece += 1
                }
            }
            while received.count < wanted, let count = try socket.read(into: &buffer) {
                guard count > 0 else { return received }
                received += buffer[..<count]
            }
        }
        return received
    }

    /// Reads until the peer ends the stream; what came before the end.
    func readToEnd() throws -> [UInt8] {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let deadline = clock.instant().nanoseconds + limit
        while true {
            try wait(POLLIN, until: deadline)
            while let count = try socket.read(into: &buffer) {
                if count == 0 { return received }
                received += buffer[..<count]
            }
        }
    }

    func shutdownWrite() { socket.shutdownWrite() }

    private func wait(_ events: Int32, until deadline: Int64) throws {
        let remaining = deadline - clock.instant().nanoseconds
        guard remaining > 0 else { throw TimedOut() }
        var entry = pollfd(fd: socket.descriptor, events: Int16(events), revents: 0)
        _ = try SystemCall.run("poll") { poll(&entry, 1, Int32(min(remaining / 1_000_000 + 1, 1_000))) }
    }
}
