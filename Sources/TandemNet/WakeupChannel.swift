#if canImport(Glibc)
import Glibc
#endif

/// Lets one thread interrupt another's wait for readiness: a pair of connected local sockets.
///
/// `eventfd` and `pipe2` need `_GNU_SOURCE`, which Swift's Glibc module does not define, so a
/// socket pair stands in; it is non-blocking and close-on-exec like every other descriptor.
/// Package-wide: the impairment proxy's thread waits on one too.
package final class WakeupChannel: Sendable {
    /// Include this in the descriptors a waiting thread polls.
    package let readDescriptor: Int32
    private let writeDescriptor: Int32

    package init() throws(SystemCallError) {
        var pair: [Int32] = [-1, -1]
        let type = Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        try SystemCall.require("socketpair") { socketpair(AF_UNIX, type, 0, &pair) }
        readDescriptor = pair[0]
        writeDescriptor = pair[1]
    }

    deinit {
        close(readDescriptor)
        close(writeDescriptor)
    }

    /// Makes `readDescriptor` readable. A full buffer means a wake-up is already pending.
    package func wake() {
        var byte: UInt8 = 1
        _ = try? SystemCall.run("send") { send(writeDescriptor, &byte, 1, Int32(MSG_NOSIGNAL)) }
    }
}
