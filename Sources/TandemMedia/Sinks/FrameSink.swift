import TandemClock

/// When and how a frame or audio chunk was presented.
public struct Presentation: Sendable, Equatable {
    /// The item being played (by default the file's name).
    public var item: String
    /// The host instant the timeline gave it.
    public var scheduledInstant: HostInstant
    /// The host instant it was presented, read just after the scheduler woke.
    public var presentedInstant: HostInstant
    /// Whether it was shown as the still picture of a paused timeline (no schedule to keep).
    public var isStill: Bool

    /// How late it was against its schedule.
    public var lateBy: TimeSpan { presentedInstant - scheduledInstant }
}

extension Presentation {
    /// `scheduledInstant` in bare nanoseconds.
    @available(*, deprecated, renamed: "scheduledInstant", message: "read scheduledInstant, a HostInstant")
    public var scheduled: Int64 {
        get { scheduledInstant.nanoseconds }
        set { scheduledInstant = HostInstant(nanoseconds: newValue) }
    }

    /// `presentedInstant` in bare nanoseconds.
    @available(*, deprecated, renamed: "presentedInstant", message: "read presentedInstant, a HostInstant")
    public var presented: Int64 {
        get { presentedInstant.nanoseconds }
        set { presentedInstant = HostInstant(nanoseconds: newValue) }
    }

    /// `lateBy` in bare nanoseconds.
    @available(*, deprecated, renamed: "lateBy", message: "read lateBy, a TimeSpan")
    public var lateness: Int64 { lateBy.nanoseconds }
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
