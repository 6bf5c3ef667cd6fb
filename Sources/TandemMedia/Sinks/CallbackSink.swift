/// A video sink that hands each presented frame to a closure: the embedder's way to get pixels.
///
/// The closure runs on the presentation thread; call `frame.rgbImage()` there only for small
/// pictures, or pass the frame on to a thread of your own.
public final class CallbackSink: VideoSink {
    private let body: @Sendable (VideoFrame, Presentation) -> Void

    /// Calls `body` with each presented frame and when it was presented.
    public init(_ body: @escaping @Sendable (VideoFrame, Presentation) -> Void) {
        self.body = body
    }

    /// Hands the frame to the closure.
    public func present(_ frame: VideoFrame, _ presentation: Presentation) {
        body(frame, presentation)
    }
}
