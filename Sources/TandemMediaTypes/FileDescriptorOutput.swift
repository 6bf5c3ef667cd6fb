#if canImport(Glibc)
import Glibc
#endif

/// Writes all of `bytes` to `descriptor`, retrying after signals and short writes; returns
/// false when the descriptor refuses (closed pipe, full disk), so that a sink can stop quietly.
@discardableResult
package func writeFully(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
    var offset = 0
    while offset < bytes.count {
        let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
        if written < 0 && errno == EINTR { continue }
        guard written > 0 else { return false }
        offset += written
    }
    return true
}
