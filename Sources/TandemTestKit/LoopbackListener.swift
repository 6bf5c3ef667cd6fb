#if canImport(Glibc)
import Glibc
#endif
import TandemHarness

/// A TCP socket listening on 127.0.0.1 at a port the kernel chose (port 0), close-on-exec: what
/// the loopback fixtures (`LoopbackHTTPServer`, `LoopbackConnectionWitness`) listen on.
enum LoopbackListener {
    /// Opens one, non-blocking if asked; throws with errno when it cannot.
    static func open(nonBlocking: Bool = false, backlog: Int32 = 16) throws -> (descriptor: Int32, port: UInt16) {
        var flags = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        if nonBlocking { flags |= Int32(SOCK_NONBLOCK.rawValue) }
        let descriptor = socket(AF_INET, flags, 0)
        guard descriptor >= 0 else { throw FixtureError("cannot open a socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(descriptor, socketAddress, length) == 0 && listen(descriptor, backlog) == 0
                    && getsockname(descriptor, socketAddress, &length) == 0
            }
        }
        guard bound else {
            let error = errno
            close(descriptor)
            throw FixtureError("cannot listen on loopback: errno \(error)")
        }
        return (descriptor, UInt16(bigEndian: address.sin_port))
    }
}

/// A TCP listener on loopback that a crafted file or URL points at, to prove that nothing
/// connected: whatever connects is queued in its backlog, and `connectionAttempted` finds it
/// there (a non-blocking accept). Closed when released.
public final class LoopbackConnectionWitness: Sendable {
    /// The port it listens on.
    public let port: UInt16
    private let descriptor: Int32

    /// A witness on a free loopback port.
    public init() throws {
        (descriptor, port) = try LoopbackListener.open(nonBlocking: true, backlog: 8)
    }

    deinit { close(descriptor) }

    /// Whether anyone has connected since the last look.
    public var connectionAttempted: Bool {
        let accepted = accept(descriptor, nil, nil)
        if accepted >= 0 { close(accepted) }
        return accepted >= 0
    }
}
