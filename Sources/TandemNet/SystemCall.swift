#if canImport(Glibc)
import Glibc
#endif

/// The one place Tandem makes system calls that can fail (package-wide: the media layer spawns mpv through it).
///
/// Retries `EINTR`, reports `EAGAIN`/`EWOULDBLOCK` as nil ("would block"), and throws every other
/// failure with the call's name and `errno`. The shape follows swift-nio's `System.swift`
/// (`syscall(blocking:where:_:)`).
package enum SystemCall {
    /// Runs `body` until it is not interrupted; nil when it would block.
    @discardableResult
    package static func run<Result: BinaryInteger>(_ name: String, _ body: () -> Result) throws(SystemCallError) -> Result? {
        while true {
            let result = body()
            guard result < 0 else { return result }
            let error = errno
            switch error {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return nil
            default: throw SystemCallError(call: name, errno: error)
            }
        }
    }

    /// Like `run`, for calls that cannot block: would-block is an error too.
    @discardableResult
    package static func require<Result: BinaryInteger>(_ name: String, _ body: () -> Result) throws(SystemCallError) -> Result {
        guard let result = try run(name, body) else { throw SystemCallError(call: name, errno: EAGAIN) }
        return result
    }

    /// Reads from a stream socket into `buffer`; nil when nothing is waiting, 0 at end of stream.
    static func receive(_ descriptor: Int32, into buffer: inout [UInt8]) throws(SystemCallError) -> Int? {
        try run("recv") {
            buffer.withUnsafeMutableBytes { Glibc.recv(descriptor, $0.baseAddress, $0.count, 0) }
        }
    }

    /// Writes as much of `bytes` to a stream socket as the kernel takes, never raising SIGPIPE;
    /// nil when it takes nothing now.
    static func send(_ descriptor: Int32, _ bytes: ArraySlice<UInt8>) throws(SystemCallError) -> Int? {
        try run("send") {
            bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }
    }
}
