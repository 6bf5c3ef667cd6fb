#if canImport(Glibc)
import Glibc
#endif
import CTandemSystem
import Synchronization
import TandemMediaTypes

/// Several pictures drawn side by side in one terminal, a wall of screens: each tile is a video
/// sink of its own (`tile(_:)`), drawn in its cell of a grid (two tiles side by side, up to four
/// in a 2×2 grid, up to nine in 3×3), with 24-bit colour half-block characters as
/// `TerminalRenderer` draws one picture, and one status line below.
///
/// Drawing runs on a thread of its own: the presentation threads only hand over their newest
/// frames, and a slow terminal makes the wall skip pictures, never a player late.
///
/// The drawing thread tests `state` with `lock` held and waits on `wake`; the tiles and `stop()`
/// change `state` first and then broadcast with `lock` held, so that no change falls between a
/// test and a wait.
public final class TerminalWall: Sendable {
    private struct State {
        var waiting: [VideoFrame?]
        var status = ""
        var stopped = false
        var drawnFrames = 0
    }

    /// How many tiles the wall has.
    public let tileCount: Int
    private let descriptor: Int32
    private let fixedSize: (columns: Int, rows: Int)?
    private let state: Mutex<State>
    /// Held by the drawing thread while it tests `state`, and by whoever wakes it.
    private let lock = ConditionLock()
    private let wake: ConditionLock.Condition
    /// The drawing thread, until `stop()` joins it.
    private let thread = Mutex<WorkerThread?>(nil)

    /// A wall of `tiles` tiles (1 to 9) drawn on file descriptor `descriptor`, in `size` columns
    /// and rows (by default the terminal's, read before each picture).
    public init(tiles: Int, descriptor: Int32 = 1, size: (columns: Int, rows: Int)? = nil) {
        tileCount = min(max(tiles, 1), 9)
        self.descriptor = descriptor
        fixedSize = size
        state = Mutex(State(waiting: Array(repeating: nil, count: tileCount)))
        wake = lock.condition(0)
        let drawing = WorkerThread(name: "tandem-wall") { [self] in renderLoop() }
        thread.withLock { $0 = drawing }
    }

    deinit {
        stop()
    }

    /// The sink that draws into tile `index` (0 is the top left; tiles fill rows first).
    public func tile(_ index: Int) -> any VideoSink {
        Tile(wall: self, index: min(max(index, 0), tileCount - 1))
    }

    /// A line drawn under the wall.
    public var statusLine: String {
        get { state.withLock { $0.status } }
        set { state.withLock { $0.status = newValue } }
    }

    /// Pictures drawn so far, all tiles together.
    public var framesDrawn: Int { state.withLock { $0.drawnFrames } }

    /// Stops drawing and shows the cursor again.
    public func stop() {
        let running = state.withLock { state -> Bool in
            defer { state.stopped = true }
            return !state.stopped
        }
        lock.withLock { wake.broadcast() }
        guard running else { return }
        let drawing = thread.withLock { thread -> WorkerThread? in
            defer { thread = nil }
            return thread
        }
        drawing?.join()
        emit("\u{1B}[0m\u{1B}[?25h\n")
    }

    /// The grid's columns and rows for `tiles` tiles: the fewest rows of at most as many columns.
    public static func grid(tiles: Int) -> (columns: Int, rows: Int) {
        let tiles = max(tiles, 1)
        var columns = 1
        while columns * columns < tiles { columns += 1 }
        return (columns, (tiles + columns - 1) / columns)
    }

    private final class Tile: VideoSink, Sendable {
        let wall: TerminalWall
        let index: Int
        init(wall: TerminalWall, index: Int) {
            self.wall = wall
            self.index = index
        }
        func present(_ frame: VideoFrame, _ presentation: Presentation) { wall.hand(frame, to: index) }
    }

    private func hand(_ frame: VideoFrame, to index: Int) {
        state.withLock { $0.waiting[index] = frame }
        lock.withLock { wake.broadcast() }
    }

    private func renderLoop() {
        let converters = (0..<tileCount).map { _ in PixelConverter() }
        emit("\u{1B}[2J\u{1B}[?25l")
        while true {
            let next: ([VideoFrame?], String)? = lock.withLock {
                while true {
                    let taken = state.withLock { state -> (next: ([VideoFrame?], String)?, stopped: Bool) in
                        guard !state.stopped else { return (nil, true) }
                        guard state.waiting.contains(where: { $0 != nil }) else { return (nil, false) }
                        defer { state.waiting = Array(repeating: nil, count: tileCount) }
                        return ((state.waiting, state.status), false)
                    }
                    if taken.stopped { return nil }
                    if let next = taken.next { return next }
                    wake.wait()
                }
            }
            guard let (frames, status) = next else { return }
            let (columns, rows) = terminalSize()
            let grid = Self.grid(tiles: tileCount)
            let cellColumns = max(columns / grid.columns, 2), cellRows = max((rows - 1) / grid.rows, 1)
            var text = ""
            var drawn = 0
            for (index, frame) in frames.enumerated() {
                guard let frame else { continue }
                let (width, height) = TerminalRenderer.pictureSize(frameWidth: frame.width, frameHeight: frame.height,
                                                                   columns: cellColumns - 1, rows: cellRows)
                guard let image = try? converters[index].convert(frame, width: width, height: height) else { continue }
                text += Self.render(image, row: 1 + (index / grid.columns) * cellRows, column: 1 + (index % grid.columns) * cellColumns)
                drawn += 1
            }
            text += "\u{1B}[\(rows);1H\u{1B}[0m\u{1B}[K" + String(status.prefix(columns))
            emit(text)
            state.withLock { $0.drawnFrames += drawn }
        }
    }

    private func terminalSize() -> (Int, Int) {
        if let fixedSize { return fixedSize }
        var columns: UInt16 = 0
        var rows: UInt16 = 0
        if tandem_terminal_size(descriptor, &columns, &rows) == 0, columns > 0, rows > 1 {
            return (Int(columns), Int(rows))
        }
        return (80, 24)
    }

    /// The escape sequences that draw `image` with its top left corner at terminal cell `row`,
    /// `column` (1-based), each text row placed by its own cursor position.
    static func render(_ image: RGBImage, row: Int, column: Int) -> String {
        var text = ""
        text.reserveCapacity(image.width * image.height * 20)
        for (line, pixelRow) in stride(from: 0, to: image.height - 1, by: 2).enumerated() {
            text += "\u{1B}[\(row + line);\(column)H"
            for x in 0..<image.width {
                let top = image.pixel(x: x, y: pixelRow)
                let bottom = image.pixel(x: x, y: pixelRow + 1)
                text += "\u{1B}[38;2;\(top.red);\(top.green);\(top.blue)m\u{1B}[48;2;\(bottom.red);\(bottom.green);\(bottom.blue)m▀"
            }
            text += "\u{1B}[0m"
        }
        return text
    }

    private func emit(_ text: String) {
        var text = text
        _ = text.withUTF8 { writeFully(descriptor, UnsafeRawBufferPointer($0)) }
    }
}
