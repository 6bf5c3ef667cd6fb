#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A key a person pressed while watching.
enum WatchKey: Equatable {
    case space, left, right, shiftLeft, shiftRight, slower, faster, resetRate, quit, end, next, previous
}

/// Reads single key presses from a terminal on standard input, in raw mode, on a thread of its
/// own; `restore()` (or deinit) puts the terminal back as it was.
final class TerminalKeys: @unchecked Sendable {
    private var saved = termios()
    private var active = false
    let keys: AsyncStream<WatchKey>

    /// Puts standard input in raw mode; nil when it is not a terminal.
    init?() {
        guard isatty(0) != 0, tcgetattr(0, &saved) == 0 else { return nil }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutablePointer(to: &raw.c_cc) { cc in
            cc.withMemoryRebound(to: cc_t.self, capacity: Int(NCCS)) { array in
                array[Int(VMIN)] = 1
                array[Int(VTIME)] = 0
            }
        }
        guard tcsetattr(0, TCSANOW, &raw) == 0 else { return nil }
        active = true
        let (stream, continuation) = AsyncStream.makeStream(of: WatchKey.self)
        keys = stream
        Thread.detachNewThread {
            var parser = KeyParser()
            var byte: UInt8 = 0
            while read(0, &byte, 1) == 1 {
                if let key = parser.feed(byte) { continuation.yield(key) }
            }
            continuation.finish()
        }
    }

    /// Restores the terminal's previous mode.
    func restore() {
        guard active else { return }
        active = false
        tcsetattr(0, TCSANOW, &saved)
    }

    deinit { restore() }
}

/// Turns terminal bytes into keys, including the escape sequences of the arrow keys
/// (`ESC [ C`, and `ESC [ 1 ; 2 C` with shift).
struct KeyParser {
    private var sequence: [UInt8] = []

    mutating func feed(_ byte: UInt8) -> WatchKey? {
        if sequence.isEmpty {
            switch byte {
            case 0x1B: sequence = [byte]; return nil
            case UInt8(ascii: " "): return .space
            case UInt8(ascii: "["): return .slower
            case UInt8(ascii: "]"): return .faster
            case UInt8(ascii: "0"): return .resetRate
            case UInt8(ascii: "q"): return .quit
            case UInt8(ascii: "e"): return .end
            case UInt8(ascii: "n"): return .next
            case UInt8(ascii: "p"): return .previous
            default: return nil
            }
        }
        sequence.append(byte)
        // A final byte (a letter or `~`) ends an escape sequence.
        guard (0x40...0x7E).contains(byte), sequence.count > 2 else {
            if sequence.count > 8 { sequence = [] }
            return nil
        }
        defer { sequence = [] }
        let shifted = sequence.contains(UInt8(ascii: ";"))
        switch byte {
        case UInt8(ascii: "C"): return shifted ? .shiftRight : .right
        case UInt8(ascii: "D"): return shifted ? .shiftLeft : .left
        default: return nil
        }
    }
}
