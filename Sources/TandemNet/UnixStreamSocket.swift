#if canImport(Glibc)
import Glibc
#endif

/// A non-blocking, close-on-exec UNIX-domain stream socket that connects to a path, closed when
/// the last reference goes: how Tandem talks to a local program's control socket (mpv's JSON IPC).
///
/// Writes never raise `SIGPIPE`. Calls that would block say so (nil); `waitUntilReadable` and
/// `waitUntilWritable` are where a thread waits, with a timeout.
public final class UnixStreamSocket: Sendable {
    /// The file descriptor.
    public let descriptor: Int32

    /// The longest path a `sockaddr_un` holds, without its terminating zero.
    public static let maximumPathLength = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    /// Connects to the socket at `path`. Fails with `ENAMETOOLONG` for a path longer than
    /// `maximumPathLength` bytes, and with `ENOENT` or `ECONNREFUSED` while nobody listens there.
    public init(connectingTo path: String) throws(SystemCallError) {
        let bytes = Array(path.utf8)
        guard bytes.count <= Self.maximumPathLength else { throw SystemCallError(call: "connect", errno: ENAMETOOLONG) }
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        descriptor = try SystemCall.require("socket") { socket(AF_UNIX, type, 0) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { path in
            for (index, byte) in bytes.enumerated() { path[index] = byte }
        }
        let descriptor = descriptor
        do {
            // A UNIX-domain connect completes at once or fails; EAGAIN means the listener's
            // backlog is full, which callers treat like a listener that is not there yet.
            try SystemCall.require("connect") {
                withUnsafePointer(to: &address) { pointer in
                    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                    }
                }
            }
        } catch {
            close(descriptor)
            throw error
        }
    }

    deinit { close(descriptor) }

    /// Reads into `buffer`; nil when nothing is waiting, 0 at end of stream.
    public func read(into buffer: inout [UInt8]) throws(SystemCallError) -> Int? {
        try SystemCall.receive(descriptor, into: &buffer)
    }

    /// Writes as much of `bytes` as the kernel takes; nil when it takes nothing now.
    public func write(_ bytes: ArraySlice<UInt8>) throws(SystemCallError) -> Int? {
        try SystemCall.send(descriptor, bytes)
    }

    /// Writes all of `bytes`, waiting up to `timeout` (ns) in all for the peer to take them;
    /// throws `ETIMEDOUT` when it does not.
    public func writeAll(_ bytes: [UInt8], timeout: Int64) throws(SystemCallError) {
        var offset = 0
        var waited: Int64 = 0
        let step: Int64 = 10_000_000
        while offset < bytes.count {
            if let written = try write(bytes[offset...]) {
                offset += written
                continue
            }
            guard waited < timeout else { throw SystemCallError(call: "send", errno: ETIMEDOUT) }
            _ = try waitUntilWritable(timeout: step)
            waited += step
        }
    }

    /// Waits until there is something to read (or the end of the stream), at most `timeout` ns;
    /// false when the time ran out.
    public func waitUntilReadable(timeout: Int64) throws(SystemCallError) -> Bool {
        try wait(for: Int16(POLLIN), timeout: timeout)
    }

    /// Waits until the socket takes more bytes, at most `timeout` ns; false when the time ran out.
    public func waitUntilWritable(timeout: Int64) throws(SystemCallError) -> Bool {
        try wait(for: Int16(POLLOUT), timeout: timeout)
    }

    /// Shuts both directions down: the peer sees the end of the stream, and a thread waiting to
    /// read here wakes up to it.
    public func shutdown() {
        _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR))
    }

    private func wait(for events: Int16, timeout: Int64) throws(SystemCallError) -> Bool {
        var entry = pollfd(fd: descriptor, events: events, revents: 0)
        // poll counts milliseconds; round up so that a deadline is never woken for early.
        let milliseconds = Int32(min((max(0, timeout) + 999_999) / 1_000_000, Int64(Int32.max)))
        let ready = try SystemCall.run("poll") { poll(&entry, 1, milliseconds) } ?? 0
        return ready > 0
    }
}
