#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import Tandem

/// A key a person pressed while watching, or what typing at the chat prompt did.
enum WatchKey: Equatable {
    case space, left, right, shiftLeft, shiftRight, slower, faster, resetRate, quit, end, next, previous
    /// `-` and `=`: the latency offset down or up by 10 ms.
    case offsetDown, offsetUp
    /// `9` and `0`: the volume down or up by 10 %; `m`: mute or unmute.
    case volumeDown, volumeUp, mute
    /// `?`: the key table.
    case help
    /// `h`: the group's health, one line per participant.
    case health
    /// `i`: the invite to pass on now (an operator's to see).
    case invite
    /// Enter: the chat prompt opens, empty.
    case openPrompt
    /// The prompt's text changed (a key typed, Backspace).
    case prompt(String)
    /// Enter at the prompt: send this text (never empty), the prompt closes.
    case say(String)
    /// Esc at the prompt (or Enter on nothing): it closes, nothing sent.
    case cancelPrompt
}

/// Reads single key presses from a terminal on standard input, in raw mode, on a thread of its
/// own; `restore()` (or deinit) puts the terminal back as it was.
final class TerminalKeys: Sendable {
    /// The terminal's mode before raw mode, while it is still to be restored.
    private let saved: Mutex<termios?>
    let keys: AsyncStream<WatchKey>

    /// Puts standard input in raw mode; nil when it is not a terminal.
    init?() {
        var saved = termios()
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
        self.saved = Mutex(saved)
        let (stream, continuation) = AsyncStream.makeStream(of: WatchKey.self)
        keys = stream
        Thread.detachNewThread {
            var parser = KeyParser()
            var byte: UInt8 = 0
            while read(0, &byte, 1) == 1 {
                if let key = parser.feed(byte) { continuation.yield(key) }
                // Esc alone (no byte of an escape sequence after it soon) closes the prompt.
                if byte == 0x1B, !TerminalKeys.moreInput(within: KeyParser.escapeWait), let key = parser.loneEscape() {
                    continuation.yield(key)
                }
            }
            continuation.finish()
        }
    }

    /// Restores the terminal's previous mode.
    func restore() {
        guard var previous = saved.withLock({ saved in defer { saved = nil }; return saved }) else { return }
        tcsetattr(0, TCSANOW, &previous)
    }

    deinit { restore() }

    /// Whether standard input has a byte to read within `milliseconds`.
    private static func moreInput(within milliseconds: Int32) -> Bool {
        var descriptor = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
        while true {
            let ready = poll(&descriptor, 1, milliseconds)
            if ready < 0 && errno == EINTR { continue }
            return ready > 0
        }
    }
}

/// Turns terminal bytes into keys, including the escape sequences of the arrow keys
/// (`ESC [ C`, and `ESC [ 1 ; 2 C` with shift), and, once Enter opened the chat prompt, into
/// its text: other keys type (UTF-8 as it comes), Backspace edits, Enter sends, Esc cancels; no
/// playback key fires while it is open. The text stops growing at the chat's limit.
struct KeyParser {
    /// How long to wait after an Esc for the rest of an escape sequence (ms): a lone Esc is a key.
    static let escapeWait: Int32 = 50

    private var sequence: [UInt8] = []
    /// The prompt's text as typed, nil when it is closed.
    private(set) var prompt: [UInt8]?

    /// The key (or prompt change) that `byte` completes, if any.
    mutating func feed(_ byte: UInt8) -> WatchKey? {
        if prompt != nil, sequence.isEmpty { return type(byte) }
        if sequence.isEmpty {
            switch byte {
            case 0x1B: sequence = [byte]; return nil
            case 0x0A, 0x0D:
                prompt = []
                return .openPrompt
            case UInt8(ascii: "-"): return .offsetDown
            case UInt8(ascii: "="): return .offsetUp
            case UInt8(ascii: " "), UInt8(ascii: "p"): return .space
            case UInt8(ascii: "["): return .slower
            case UInt8(ascii: "]"): return .faster
            case 0x7F, 0x08: return .resetRate
            case UInt8(ascii: "9"): return .volumeDown
            case UInt8(ascii: "0"): return .volumeUp
            case UInt8(ascii: "m"): return .mute
            case UInt8(ascii: "q"): return .quit
            case UInt8(ascii: "e"): return .end
            case UInt8(ascii: ">"): return .next
            case UInt8(ascii: "<"): return .previous
            case UInt8(ascii: "?"): return .help
            case UInt8(ascii: "h"): return .health
            case UInt8(ascii: "i"): return .invite
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
        // At the prompt, arrows and other sequences do nothing.
        guard prompt == nil else { return nil }
        let shifted = sequence.contains(UInt8(ascii: ";"))
        switch byte {
        case UInt8(ascii: "C"): return shifted ? .shiftRight : .right
        case UInt8(ascii: "D"): return shifted ? .shiftLeft : .left
        default: return nil
        }
    }
}

extension KeyParser {
    /// An Esc with nothing after it: closes the prompt (nothing to do otherwise).
    mutating func loneEscape() -> WatchKey? {
        guard sequence == [0x1B] else { return nil }
        sequence = []
        guard prompt != nil else { return nil }
        prompt = nil
        return .cancelPrompt
    }

    /// A byte typed at the prompt.
    private mutating func type(_ byte: UInt8) -> WatchKey? {
        guard var text = prompt else { return nil }
        switch byte {
        case 0x1B:
            // The start of a sequence (skipped), or a lone Esc (`loneEscape`).
            sequence = [byte]
            return nil
        case 0x0A, 0x0D:
            prompt = nil
            let line = String(decoding: text, as: UTF8.self)
            return text.isEmpty ? .cancelPrompt : .say(line)
        case 0x7F, 0x08:
            guard !text.isEmpty else { return nil }
            // One character off, however many bytes it took.
            text = Array(String(String(decoding: text, as: UTF8.self).dropLast()).utf8)
        case 0x00..<0x20:
            return nil
        default:
            guard text.count < ChatMessage.maximumBytes else { return nil }
            text.append(byte)
        }
        prompt = text
        return .prompt(String(decoding: text, as: UTF8.self))
    }
}
