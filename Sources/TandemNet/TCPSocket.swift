#if canImport(Glibc)
import Glibc
#endif

/// A non-blocking, close-on-exec TCP socket, closed when the last reference goes.
///
/// Writes never raise `SIGPIPE`. Every call that would block says so (nil) instead of waiting;
/// an `EventLoop` is where a thread waits.
public final class TCPSocket: Sendable {
    /// The file descriptor.
    public let descriptor: Int32

    /// Opens a socket for `family` (`AF_INET` or `AF_INET6`).
    public init(family: Int32) throws(SystemCallError) {
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        descriptor = try SystemCall.require("socket") { socket(family, type, 0) }
    }

    private init(adopting descriptor: Int32) { self.descriptor = descriptor }

    deinit { close(descriptor) }

    /// A listening socket bound to `address` (port 0 picks a free port). An IPv6 wildcard
    /// listener (`::`) also takes IPv4 clients, as Linux's dual-stack sockets do by default.
    public static func listening(on address: SocketAddress, backlog: Int32 = 512) throws(SystemCallError) -> TCPSocket {
        let socket = try TCPSocket(family: address.family)
        let descriptor = socket.descriptor
        try socket.setOption(SOL_SOCKET, SO_REUSEADDR, 1)
        try SystemCall.require("bind") { address.withSockaddr { Glibc.bind(descriptor, $0, $1) } }
        try SystemCall.require("listen") { Glibc.listen(descriptor, backlog) }
        return socket
    }

    /// Binds the socket to a local `address` before it connects (a source address of its own,
    /// say 127.0.0.2 on loopback; port 0 picks one).
    public func bind(to address: SocketAddress) throws(SystemCallError) {
        let descriptor = descriptor
        try SystemCall.require("bind") { address.withSockaddr { Glibc.bind(descriptor, $0, $1) } }
    }

    /// Starts connecting to `address`; true when connected at once, false when in progress (the
    /// socket becomes writable when it is done; `pendingError()` then says how it went).
    public func connect(to address: SocketAddress) throws(SystemCallError) -> Bool {
        let descriptor = descriptor
        do {
            try SystemCall.require("connect") { address.withSockaddr { Glibc.connect(descriptor, $0, $1) } }
            return true
        } catch where error.errno == EINPROGRESS || error.errno == EAGAIN {
            return false
        }
    }

    /// The error a non-blocking connect ended with, 0 when it succeeded.
    public func pendingError() -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &value, &length) == 0 else { return errno }
        return value
    }

    /// Turns off Nagle's algorithm, so that small frames leave at once.
    public func setNoDelay() throws(SystemCallError) {
        try setOption(Int32(IPPROTO_TCP), TCP_NODELAY, 1)
    }

    /// Accepts one waiting connection, non-blocking and close-on-exec; nil when none is waiting.
    public func accept() throws(SystemCallError) -> (socket: TCPSocket, peer: SocketAddress?)? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let descriptor = descriptor
        // accept4 needs _GNU_SOURCE, which Swift's Glibc module lacks; fcntl sets the same flags.
        let accepted = try SystemCall.run("accept") {
            withUnsafeMutablePointer(to: &storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.accept(descriptor, $0, &length) }
            }
        }
        guard let accepted else { return nil }
        let socket = TCPSocket(adopting: accepted)
        try SystemCall.require("fcntl") { fcntl(accepted, F_SETFD, FD_CLOEXEC) }
        let flags = try SystemCall.require("fcntl") { fcntl(accepted, F_GETFL) }
        try SystemCall.require("fcntl") { fcntl(accepted, F_SETFL, flags | O_NONBLOCK) }
        return (socket, SocketAddress(storage: storage, length: length))
    }

    /// Reads into `buffer`; nil when nothing is waiting, 0 at end of stream.
    public func read(into buffer: inout [UInt8]) throws(SystemCallError) -> Int? {
        try SystemCall.receive(descriptor, into: &buffer)
    }

    /// How a `readAvailable(into:maximumReads:_:)` pass ended.
    public enum ReadEnd: Sendable, Equatable {
        /// Everything waiting was read: a read would block, or one came back short of the
        /// buffer (readiness is level-triggered, so what arrives later is reported again).
        case drained
        /// The peer closed its side: end of stream.
        case closed
        /// The handler asked to stop (its connection went away, say).
        case stopped
        /// The bounded number of reads was used up with the buffer filled each time: more may
        /// wait, for the next pass.
        case limit
    }

    /// Reads what waits, up to `maximumReads` times into `buffer`, handing each piece read to
    /// `received`, which returns whether to read on. Bounded, so that one busy peer cannot
    /// starve the others on a loop; throws when a read fails (a reset).
    public func readAvailable(into buffer: inout [UInt8], maximumReads: Int = 16,
                              _ received: (ArraySlice<UInt8>) -> Bool) throws(SystemCallError) -> ReadEnd {
        for _ in 0..<maximumReads {
            guard let count = try read(into: &buffer) else { return .drained }
            guard count > 0 else { return .closed }
            guard received(buffer[..<count]) else { return .stopped }
            if count < buffer.count { return .drained }
        }
        return .limit
    }

    /// Writes as much of `bytes` as the kernel takes; nil when it takes nothing now.
    public func write(_ bytes: ArraySlice<UInt8>) throws(SystemCallError) -> Int? {
        try SystemCall.send(descriptor, bytes)
    }

    /// Shuts both directions down: the peer sees the end of the stream, and so does this side.
    public func shutdown() {
        _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR))
    }

    /// Shuts the sending direction down: the peer sees the end of the stream once it has read
    /// what was sent, while this side can still read (and discard) what the peer sends.
    public func shutdownWrite() {
        _ = Glibc.shutdown(descriptor, Int32(SHUT_WR))
    }

    /// The address the socket is bound to.
    public func localAddress() throws(SystemCallError) -> SocketAddress {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let descriptor = descriptor
        try SystemCall.require("getsockname") {
            withUnsafeMutablePointer(to: &storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
            }
        }
        guard let address = SocketAddress(storage: storage, length: length) else {
            throw SystemCallError(call: "getsockname", errno: EAFNOSUPPORT)
        }
        return address
    }

    private func setOption(_ level: Int32, _ name: Int32, _ value: Int32) throws(SystemCallError) {
        var value = value
        let descriptor = descriptor
        try SystemCall.require("setsockopt") {
            setsockopt(descriptor, level, name, &value, socklen_t(MemoryLayout<Int32>.size))
        }
    }
}
