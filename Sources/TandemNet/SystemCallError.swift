#if canImport(Glibc)
import Glibc
#endif

/// A system call failed: which call, and the `errno` it left.
public struct SystemCallError: Error, Hashable, CustomStringConvertible {
    /// The call's name, for example `"sendto"`.
    public let call: String
    /// The `errno` value.
    public let errno: Int32

    /// Creates the error for `call` failing with `errno`.
    public init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    /// `call: strerror(errno) (errno N)`.
    public var description: String {
        "\(call): \(String(cString: strerror(errno))) (errno \(errno))"
    }
}
