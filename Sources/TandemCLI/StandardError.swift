#if canImport(Glibc)
import Glibc
#endif

/// Writes a line to standard error, unbuffered, so that it interleaves correctly with the
/// program's standard output in a terminal or a log.
func printError(_ line: String) {
    var text = line
    if !text.hasSuffix("\n") { text += "\n" }
    text.withUTF8 { bytes in
        var offset = 0
        while offset < bytes.count {
            let written = write(2, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }
}
