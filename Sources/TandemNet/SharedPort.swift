#if canImport(Glibc)
import Glibc
#endif

/// A TCP listener and a UDP socket bound to the same port number, as the relay and the
/// impairment proxy serve: reliable frames over TCP, datagrams over UDP.
public struct SharedPort: Sendable {
    /// The TCP listener.
    public let listener: TCPSocket
    /// The UDP socket.
    public let datagrams: UDPSocket
    /// Where both are bound.
    public let address: SocketAddress

    /// Binds both to `address`. With port 0, the kernel's pick for TCP is tried for UDP too, and
    /// another is picked when that port is taken for UDP (up to 20 times).
    public init(binding address: SocketAddress) throws(SystemCallError) {
        var attempt = 0
        while true {
            let listener = try TCPSocket.listening(on: address)
            let bound = try listener.localAddress()
            do {
                datagrams = try UDPSocket(boundTo: address.withPort(bound.port))
                self.listener = listener
                self.address = bound
                return
            } catch where address.port == 0 && error.errno == EADDRINUSE && attempt < 20 {
                attempt += 1
            }
        }
    }
}
