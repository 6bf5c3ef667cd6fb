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
}
