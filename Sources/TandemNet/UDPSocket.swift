#if canImport(Glibc)
import Glibc
#endif

/// A non-blocking, close-on-exec UDP socket, closed when the last reference goes.
///
/// Sends never raise `SIGPIPE`. Every call that would block says so (false or nil) instead of
/// waiting; `Readiness` is where a thread waits.
public final class UDPSocket: Sendable {
    /// The file descriptor.
    public let descriptor: Int32

    /// Opens a socket for `family` (`AF_INET` or `AF_INET6`).
    public init(family: Int32) throws(SystemCallError) {
        let type = Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        descriptor = try SystemCall.require("socket") { socket(family, type, 0) }
    }

    /// Opens a socket and binds it to `address` (port 0 picks a free port).
    public convenience init(boundTo address: SocketAddress) throws(SystemCallError) {
        try self.init(family: address.family)
        let descriptor = descriptor
        try SystemCall.require("bind") { address.withSockaddr { Glibc.bind(descriptor, $0, $1) } }
    }

    deinit { close(descriptor) }

    /// Fixes the peer, so that `send(_:)` needs no address and the kernel drops datagrams from
    /// anyone else.
    public func connect(to address: SocketAddress) throws(SystemCallError) {
        let descriptor = descriptor
        try SystemCall.require("connect") { address.withSockaddr { Glibc.connect(descriptor, $0, $1) } }
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

    /// Sends one datagram to `address`; false when the send buffer is full.
    @discardableResult
    public func send(_ bytes: [UInt8], to address: SocketAddress) throws(SystemCallError) -> Bool {
        let descriptor = descriptor
        return try SystemCall.run("sendto") {
            bytes.withUnsafeBytes { raw in
                address.withSockaddr { sendto(descriptor, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL), $0, $1) }
            }
        } != nil
    }

    /// Sends one datagram to the connected peer; false when the send buffer is full.
    @discardableResult
    public func send(_ bytes: [UInt8]) throws(SystemCallError) -> Bool {
        let descriptor = descriptor
        return try SystemCall.run("send") {
            bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        } != nil
    }

    /// Receives one datagram into `buffer`; nil when none is waiting.
    ///
    /// `length` is the datagram's real length, which exceeds `buffer.count` when it was cut short,
    /// so that callers can tell an oversized datagram from one that fits.
    public func receive(into buffer: inout [UInt8]) throws(SystemCallError) -> (length: Int, sender: SocketAddress?)? {
        var storage = sockaddr_storage()
        var addressLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let descriptor = descriptor
        let received = try SystemCall.run("recvfrom") {
            buffer.withUnsafeMutableBytes { raw in
                withUnsafeMutablePointer(to: &storage) { pointer in
                    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        recvfrom(descriptor, raw.baseAddress, raw.count, Int32(MSG_TRUNC), $0, &addressLength)
                    }
                }
            }
        }
        guard let received else { return nil }
        return (received, SocketAddress(storage: storage, length: addressLength))
    }
}
