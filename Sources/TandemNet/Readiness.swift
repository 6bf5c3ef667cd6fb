#if canImport(Glibc)
import Glibc
#endif

/// Waits for file descriptors to become readable.
enum Readiness {
    /// Blocks until one of `descriptors` is readable or `timeout` nanoseconds pass; returns which
    /// are readable (empty on timeout). A negative timeout waits indefinitely.
    static func waitUntilReadable(_ descriptors: [Int32], timeout: Int64) throws(SystemCallError) -> [Int32] {
        var entries = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        // poll counts milliseconds; round up so that a deadline is never woken for early.
        let milliseconds = timeout < 0 ? -1 : Int32(min((timeout + 999_999) / 1_000_000, Int64(Int32.max)))
        let ready = try SystemCall.run("poll") { poll(&entries, nfds_t(entries.count), milliseconds) } ?? 0
        guard ready > 0 else { return [] }
        return entries.filter { $0.revents != 0 }.map(\.fd)
    }
}
