import TandemClock
import TandemMediaTypes

/// The built-in player's presentation log: one line per presented frame.
extension PresentationLog: VideoSink {
    /// Buffers the frame's line; a full buffer is written at once.
    public func present(_ frame: VideoFrame, _ presentation: Presentation) {
        append(PresentationLog.line(frame.presentationTime, presentation, queued: frame.queuedAt))
    }

    /// The line of a frame at `pts`; one presented late says when it was `queued`.
    static func line(_ pts: Int64, _ presentation: Presentation, queued: Int64? = nil) -> String {
        let late = !presentation.isStill && presentation.lateBy.nanoseconds > lateThreshold
        return line(item: presentation.item, pts: MediaTime.seconds(pts), scheduled: presentation.scheduledInstant.nanoseconds,
                    presented: presentation.presentedInstant.nanoseconds, still: presentation.isStill, reading: false,
                    queued: late ? queued : nil)
    }
}
