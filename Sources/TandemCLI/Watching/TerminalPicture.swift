#if canImport(Glibc)
import Glibc
#endif
import CTandemSystem
import Synchronization
import TandemMedia

/// The picture in the terminal (`--video terminal`). At a terminal taking keys, it is drawn over
/// all its rows but the last few (`StatusArea.textRowCount(of:)`), which `StatusArea` keeps for
/// the lines printed above the status line (the picture's redraws would cover them anywhere
/// else): a `TerminalRenderer` of that size, started afresh at the new size when the terminal is
/// resized (the screen is cleared then, and the lines kept so far with it). Otherwise a
/// `TerminalRenderer` over the whole terminal, which follows its size itself.
final class TerminalPicture: VideoSink, Sendable {
    private struct State {
        var renderer: TerminalRenderer
        /// The terminal's size the renderer was made for; nil when it follows the size itself.
        var size: Size?
        var status = ""
        var stopped = false
    }

    private struct Size: Equatable {
        var columns: Int
        var rows: Int
    }

    private let state: Mutex<State>

    /// A picture over the terminal, above the rows kept for lines when there is a terminal on
    /// standard input and output with room for both.
    init() {
        guard isatty(0) != 0, isatty(1) != 0, let size = Self.terminalSize(), let renderer = Self.renderer(keepingLinesBelow: size) else {
            state = Mutex(State(renderer: TerminalRenderer(), size: nil))
            return
        }
        state = Mutex(State(renderer: renderer, size: size))
    }

    /// A line drawn under the picture (position, rate, who did what).
    var statusLine: String {
        get { state.withLock { $0.status } }
        set {
            state.withLock { state in
                state.status = newValue
                state.renderer.statusLine = newValue
            }
        }
    }

    /// Hands the frame to the renderer; first, when the terminal's size changed, a renderer of
    /// the new size takes over.
    func present(_ frame: VideoFrame, _ presentation: Presentation) {
        let renderer = state.withLock { state -> TerminalRenderer? in
            guard !state.stopped else { return nil }
            if let size = state.size, let now = Self.terminalSize(), now != size, let resized = Self.renderer(keepingLinesBelow: now) {
                state.renderer.stop()
                resized.statusLine = state.status
                state.renderer = resized
                state.size = now
            }
            return state.renderer
        }
        renderer?.present(frame, presentation)
    }

    /// Stops drawing and shows the cursor again.
    func stop() {
        let renderer = state.withLock { state in
            state.stopped = true
            return state.renderer
        }
        renderer.stop()
    }

    /// A renderer above the rows kept for lines in a terminal of `size`, and those rows kept; nil
    /// when the terminal is too small for both.
    private static func renderer(keepingLinesBelow size: Size) -> TerminalRenderer? {
        let kept = StatusArea.textRowCount(of: size.rows)
        guard size.rows > kept + 4 else { return nil }
        StatusArea.shared.keepLines(inRows: size.rows - kept + 1...size.rows)
        return TerminalRenderer(size: (size.columns, size.rows - kept))
    }

    /// Standard output's terminal size, if it is one.
    private static func terminalSize() -> Size? {
        var columns: UInt16 = 0
        var rows: UInt16 = 0
        guard tandem_terminal_size(1, &columns, &rows) == 0, columns > 0, rows > 0 else { return nil }
        return Size(columns: Int(columns), rows: Int(rows))
    }
}
