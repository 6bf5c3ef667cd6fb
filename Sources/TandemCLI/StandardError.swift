#if canImport(Glibc)
import Glibc
#endif
import Tandem

/// Writes a line to standard error, unbuffered, so that it interleaves correctly with the
/// program's standard output in a terminal or a log. Error lines carry what peers and the relay
/// said (reasons, names), so control characters are removed first.
func printError(_ line: String) {
    writeUnbuffered(2, TerminalText.sanitized(line.hasSuffix("\n") ? String(line.dropLast()) : line) + "\n")
}

/// Writes a line to standard output at once, bypassing stdio's buffer and its locks.
///
/// Watching reads standard input on a thread of its own with `readLine`, which holds stdin's
/// stdio lock while it waits; `fflush(NULL)` takes every stream's lock, stdin's too, so output
/// through stdio would wait for the next input line. Scripts and tests read these lines as they
/// come, so they must not sit in a buffer either.
func printOutput(_ text: String, newline: Bool = true) {
    writeUnbuffered(1, newline ? text + "\n" : text)
}

private func writeUnbuffered(_ descriptor: Int32, _ text: String) {
    var text = text
    text.withUTF8 { bytes in
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }
}
