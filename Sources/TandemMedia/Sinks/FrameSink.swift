import TandemClock

/// When and how a frame or audio chunk was presented.
public struct Presentation: Sendable, Equatable {
    /// The item being played (by default the file's name).
    public var item: String
    /// The local monotonic instant the timeline gave it, in nanoseconds.
    public var scheduled: Nanoseconds
    /// The local monotonic instant it was presented, read just after the scheduler woke.
    public var presented: Nanoseconds
    /// Whether it was shown as the still picture of a paused timeline (no schedule to keep).
    public var isStill: Bool

    /// How late it was against its schedule, in nanoseconds.
    public var lateness: Nanoseconds { presented - scheduled }
}

/// Receives each video frame at the instant the timeline gives it.
///
/// `present` runs on the player's presentation thread and must return quickly (well under a
/// millisecond): a sink with slow work hands the frame to a thread of its own, as
/// `TerminalRenderer` does.
public protocol VideoSink: AnyObject, Sendable {
    /// Called once for each presented frame.
    func present(_ frame: VideoFrame, _ presentation: Presentation)
}

/// Receives decoded sound at the pace of the timeline.
public protocol AudioSink: AnyObject, Sendable {
    /// Called once for each chunk, at the instant its first sample is due.
    func consume(_ chunk: AudioChunk, _ presentation: Presentation)
}
