#if canImport(Glibc)
import Glibc
#endif
import CTandemSystem
import TandemMediaTypes

/// Several pictures drawn side by side in one terminal, a wall of screens: each tile is a video
/// sink of its own (`tile(_:)`), drawn in its cell of a grid (two tiles side by side, up to four
/// in a 2×2 grid, up to nine in 3×3), with 24-bit colour half-block characters as
/// `TerminalRenderer` draws one picture, and one status line below.
///
/// Drawing runs on a thread of its own: the presentation threads only hand over their newest
/// frames, and a slow terminal makes the wall skip pictures, never a player late.
///
/// Confinement (why `@unchecked Sendable`): every mutable field but `thread` is read and written
/// with `lock` held; `thread` is set in `init` and joined and cleared only by the one `stop()`
/// that finds the wall running.
public final class TerminalWall: @unchecked Sendable {
    /// How many tiles the wall has.
    public let tileCount: Int
    private let descriptor: Int32
    private let fixedSize: (columns: Int, rows: Int)?
    private let lock = ConditionLock()
    private let wake: ConditionLock.Condition
    private var waiting: [VideoFrame?]
    private var status = ""
    private var stopped = false
    private var drawnFrames = 0
    private var thread: WorkerThread?

    /// A wall of `tiles` tiles (1 to 9) drawn on file descriptor `descriptor`, in `size` columns
    /// and rows (by default the terminal's, read before each picture).
    public init(tiles: Int, descriptor: Int32 = 1, size: (columns: Int, rows: Int)? = nil) {
        tileCount = min(max(tiles, 1), 9)
        self.descriptor = descriptor
        fixedSize = size
        waiting = Array(repeating: nil, count: tileCount)
        wake = ConditionLock.Condition(lock)
        thread = WorkerThread(name: "tandem-wall") { [self] in renderLoop() }
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
        get { lock.withLock { status } }
        set { lock.withLock { status = newValue } }
    }

    /// Pictures drawn so far, all tiles together.
    public var framesDrawn: Int { lock.withLock { drawnFrames } }

    /// Stops drawing and shows the cursor again.
    public func stop() {
        let running = lock.withLock {
            let running = !stopped
            stopped = true
            wake.broadcast()
            return running
        }
        guard running else { return }
        thread?.join()
        thread = nil
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
        lock.withLock {
            waiting[index] = frame
            wake.broadcast()
        }
    }

    private func renderLoop() {
        let converters = (0..<tileCount).map { _ in PixelConverter() }
        emit("\u{1B}[2J\u{1B}[?25l")
        while true {
            let next: ([VideoFrame?], String)? = lock.withLock {
                while waiting.allSatisfy({ $0 == nil }) && !stopped { wake.wait() }
                guard !stopped else { return nil }
                defer { waiting = Array(repeating: nil, count: tileCount) }
                return (waiting, status)
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
            lock.withLock { drawnFrames += drawn }
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
