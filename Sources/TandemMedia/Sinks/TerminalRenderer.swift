#if canImport(Glibc)
import Glibc
#endif
import CTandemSystem
import Synchronization
import TandemMediaTypes

/// A video sink that draws frames in a terminal with 24-bit colour half-block characters (each
/// character cell shows two pixels, one above the other), sized to fit the terminal.
///
/// Drawing runs on a thread of its own: the presentation thread only hands over the newest
/// frame, and a slow terminal makes the renderer skip pictures, never the player late.
///
/// The drawing thread tests `state` with `lock` held and waits on `wake`; `present(_:_:)` and
/// `stop()` change `state` first and then broadcast with `lock` held, so that no change falls
/// between a test and a wait.
public final class TerminalRenderer: VideoSink, Sendable {
    private struct State {
        var waitingFrame: VideoFrame?
        var status = ""
        var stopped = false
        var drawnFrames = 0
    }

    private let descriptor: Int32
    private let fixedSize: (columns: Int, rows: Int)?
    private let state = Mutex(State())
    /// Held by the drawing thread while it tests `state`, and by whoever wakes it.
    private let lock = ConditionLock()
    private let wake: ConditionLock.Condition
    /// The drawing thread, until `stop()` joins it.
    private let thread = Mutex<WorkerThread?>(nil)

    /// Draws on file descriptor `descriptor` (standard output by default).
    ///
    /// - Parameter size: columns and rows to draw in; by default the terminal's size, read
    ///   before each picture so that resizing the window works.
    public init(descriptor: Int32 = 1, size: (columns: Int, rows: Int)? = nil) {
        self.descriptor = descriptor
        self.fixedSize = size
        wake = lock.condition(0)
        let drawing = WorkerThread(name: "tandem-terminal") { [self] in renderLoop() }
        thread.withLock { $0 = drawing }
    }

    deinit {
        stop()
    }

    /// A line drawn under the picture (position, rate, who did what).
    public var statusLine: String {
        get { state.withLock { $0.status } }
        set { state.withLock { $0.status = newValue } }
    }

    /// Pictures drawn so far.
    public var framesDrawn: Int { state.withLock { $0.drawnFrames } }

    /// Hands the newest frame to the drawing thread.
    public func present(_ frame: VideoFrame, _ presentation: Presentation) {
        state.withLock { $0.waitingFrame = frame }
        lock.withLock { wake.broadcast() }
    }

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

    private func renderLoop() {
        let converter = PixelConverter()
        emit("\u{1B}[2J\u{1B}[?25l")
        while true {
            let next: (VideoFrame, String)? = lock.withLock {
                while true {
                    let taken = state.withLock { state -> (next: (VideoFrame, String)?, stopped: Bool) in
                        guard !state.stopped else { return (nil, true) }
                        guard let frame = state.waitingFrame else { return (nil, false) }
                        state.waitingFrame = nil
                        return ((frame, state.status), false)
                    }
                    if taken.stopped { return nil }
                    if let next = taken.next { return next }
                    wake.wait()
                }
            }
            guard let (frame, status) = next else { return }
            let (columns, rows) = terminalSize()
            let (width, height) = TerminalRenderer.pictureSize(
                frameWidth: frame.width, frameHeight: frame.height, columns: columns, rows: rows - 1
            )
            guard let image = try? converter.convert(frame, width: width, height: height) else { continue }
            emit(TerminalRenderer.render(image, status: String(status.prefix(columns))))
            state.withLock { $0.drawnFrames += 1 }
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

    /// The largest picture, in pixels, that keeps the frame's shape inside `columns` x `rows`
    /// cells of two pixels each (an even height).
    static func pictureSize(frameWidth: Int, frameHeight: Int, columns: Int, rows: Int) -> (Int, Int) {
        let maxWidth = max(columns, 2)
        let maxHeight = max(rows, 1) * 2
        let scale = min(Double(maxWidth) / Double(max(frameWidth, 1)), Double(maxHeight) / Double(max(frameHeight, 1)))
        let width = max(2, Int(Double(frameWidth) * scale))
        let height = max(2, Int(Double(frameHeight) * scale) / 2 * 2)
        return (min(width, maxWidth), min(height, maxHeight))
    }

    /// The escape sequences that draw `image` from the top left corner, with `status` below.
    static func render(_ image: RGBImage, status: String) -> String {
        var text = "\u{1B}[H"
        text.reserveCapacity(image.width * image.height * 20)
        for row in stride(from: 0, to: image.height - 1, by: 2) {
            for column in 0..<image.width {
                let top = image.pixel(x: column, y: row)
                let bottom = image.pixel(x: column, y: row + 1)
                text += "\u{1B}[38;2;\(top.red);\(top.green);\(top.blue)m\u{1B}[48;2;\(bottom.red);\(bottom.green);\(bottom.blue)m▀"
            }
            text += "\u{1B}[0m\u{1B}[K\r\n"
        }
        text += "\u{1B}[0m\u{1B}[K" + status
        return text
    }

    private func emit(_ text: String) {
        var text = text
        _ = text.withUTF8 { writeFully(descriptor, UnsafeRawBufferPointer($0)) }
    }
}
