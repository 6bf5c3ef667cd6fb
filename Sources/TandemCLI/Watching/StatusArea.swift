import CTandemSystem
import Synchronization
import Tandem

/// The bottom of a watching terminal: the status line, and above it the chat prompt while one is
/// open. Everything else (events, chat, refusals) is printed above both, which are drawn again
/// after it, so that lines never tear the prompt a person is typing in.
///
/// Inactive (no terminal on standard input) it draws nothing and lines print as they are.
final class StatusArea: Sendable {
    /// The one status area of this process.
    static let shared = StatusArea()

    private struct State {
        var active = false
        var status = ""
        var prompt: String?
        /// How many lines of the block are on the screen (the cursor at the end of the last).
        var shown = 0
        /// The rows under a picture in the terminal where lines are printed (`keepLines(inRows:)`).
        var textRows: ClosedRange<Int>?
    }

    /// How many of a terminal's `rows` hold lines under a picture drawn in the terminal: a fifth,
    /// at least 4 (the choice of player, the invite, the keys' hint and a change fit at 80 columns).
    static func textRowCount(of rows: Int) -> Int { max(4, rows / 5) }

    private let state = Mutex(State())

    /// Starts drawing (at a terminal).
    func activate() { state.withLock { $0.active = true } }

    /// Stops drawing, leaving the last status line on the screen.
    func deactivate() {
        state.withLock { state in
            state.active = false
            state.prompt = nil
        }
    }

    /// Whether it draws.
    var isActive: Bool { state.withLock { $0.active } }

    /// The terminal's width in columns, read at each call so that a resized terminal is followed
    /// at the next draw: standard output's, else standard error's, else standard input's (output
    /// piped through `tee` still draws on the terminal the keys come from); 80 when none is one.
    static var columns: Int {
        for descriptor: Int32 in [1, 2, 0] {
            var columns: UInt16 = 0
            var rows: UInt16 = 0
            if tandem_terminal_size(descriptor, &columns, &rows) == 0, columns > 0 { return Int(columns) }
        }
        return 80
    }

    /// The prompt's text as typed, nil when no prompt is open.
    var prompt: String? { state.withLock { $0.prompt } }

    /// Replaces the status line.
    func setStatus(_ line: String) {
        state.withLock { state in
            state.status = line
            // Under a picture, the picture's own status line shows both.
            guard state.active, state.textRows == nil else { return }
            printOutput(Self.erase(state.shown) + Self.block(state), newline: false)
            state.shown = state.prompt == nil ? 1 : 2
        }
    }

    /// Opens the prompt with `text` (or changes what it shows), nil closes it.
    func setPrompt(_ text: String?) {
        state.withLock { state in
            state.prompt = text
            // Under a picture, the picture's own status line shows both.
            guard state.active, state.textRows == nil else { return }
            printOutput(Self.erase(state.shown) + Self.block(state), newline: false)
            state.shown = text == nil ? 1 : 2
        }
    }

    /// Under a picture drawn in the terminal above `rows` (the terminal's last rows, 1-based):
    /// lines are printed there, scrolling within them (the terminal's scrolling region), where the
    /// picture's redraws never cover them.
    func keepLines(inRows rows: ClosedRange<Int>) {
        state.withLock { $0.textRows = rows }
        printOutput("\u{1B}[\(rows.lowerBound);\(rows.upperBound)r", newline: false)
    }

    /// The whole terminal scrolls again (the picture has stopped), the cursor on its last row.
    func releaseLines() {
        state.withLock { state in
            guard let rows = state.textRows else { return }
            state.textRows = nil
            printOutput("\u{1B}[r\u{1B}[\(rows.upperBound);1H", newline: false)
        }
    }

    /// Prints `line` above the block (or, inactive, on a line of its own) on `descriptor`'s
    /// stream: standard output, or standard error (2). Under a picture, on the last of the rows
    /// kept for lines, the lines before it scrolled up.
    func printAbove(_ line: String, descriptor: Int32 = 1) {
        state.withLock { state in
            if let rows = state.textRows {
                printOutput("\u{1B}[\(rows.upperBound);1H\n\r\u{1B}[K" + line, newline: false)
                return
            }
            guard state.active else {
                if descriptor == 2 { printError(line) } else { printOutput(line) }
                return
            }
            printOutput(Self.erase(state.shown), newline: false)
            if descriptor == 2 { printError(line) } else { printOutput(line) }
            printOutput(Self.block(state), newline: false)
            state.shown = state.prompt == nil ? 1 : 2
        }
    }

    /// Clears the `lines` of the block drawn, leaving the cursor at the start of its first.
    private static func erase(_ lines: Int) -> String {
        "\r\u{1B}[K" + String(repeating: "\u{1B}[1A\r\u{1B}[K", count: max(0, lines - 1))
    }

    private static func block(_ state: State) -> String {
        guard let prompt = state.prompt else { return state.status }
        return "say: \(TerminalText.sanitized(prompt))▏\n\r\u{1B}[K" + state.status
    }
}
