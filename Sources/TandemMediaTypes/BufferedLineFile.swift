#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// A file written a line at a time through a buffer in memory, in blocks of `threshold` bytes, so
/// that logging from a timing-critical thread costs microseconds; `flush()`, `close()` (or
/// deinit) write the rest. The players' logs (`PresentationLog`, the sound output's `AudioLog`)
/// write through it.
package final class BufferedLineFile: Sendable {
    /// The file being written.
    package let path: String
    private let threshold: Int
    private let state: Mutex<(descriptor: Int32, buffer: [UInt8])>

    /// Creates (or truncates) the file at `path`; `what` names it in the error.
    package init(path: String, what: String, threshold: Int) throws(MediaError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw MediaError.io(path, "cannot create the \(what): \(String(cString: strerror(errno)))")
        }
        self.path = path
        self.threshold = threshold
        state = Mutex((descriptor, []))
    }

    deinit { close() }

    /// Buffers `line`; a full buffer is written at once.
    package func append(_ line: String) {
        state.withLock { state in
            state.buffer.append(contentsOf: line.utf8)
            if state.buffer.count >= threshold { Self.write(&state) }
        }
    }

    /// Writes what is buffered.
    package func flush() {
        state.withLock { Self.write(&$0) }
    }

    /// Writes what is buffered and closes the file; later lines are dropped.
    package func close() {
        state.withLock { state in
            Self.write(&state)
            if state.descriptor >= 0 {
                Glibc.close(state.descriptor)
                state.descriptor = -1
            }
        }
    }

    /// `text` as a JSON string, quotes included.
    package static func jsonString(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case _ where scalar.value < 0x20: result += String(format: "\\u%04x", scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    private static func write(_ state: inout (descriptor: Int32, buffer: [UInt8])) {
        guard state.descriptor >= 0, !state.buffer.isEmpty else { return }
        let descriptor = state.descriptor
        _ = state.buffer.withUnsafeBytes { writeFully(descriptor, $0) }
        state.buffer.removeAll(keepingCapacity: true)
    }
}
