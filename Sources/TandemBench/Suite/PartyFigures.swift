/// What `host-leaves` adds to a run's figures: how the peers that stayed played on once the
/// host left (the session outlives its host). Durations are milliseconds.
public struct HostLeaveFigures: Sendable, Codable, Equatable {
    /// When the host was told to leave, seconds from the start of the script.
    public var leftAt: Double
    /// The spread between the peers that stayed, over every frame all of them showed that was
    /// first presented after the host was told to leave.
    public var spread: Percentiles?
    /// Frames the staying peers dropped late over the whole run, all together (their own
    /// statistics): none dropped before the leave either.
    public var framesDropped: Int
    /// Frames missing from the staying peers' presentation logs after the leave: within one
    /// timeline segment, a step of media time of more than one frame (all together).
    public var framesSkipped: Int
    /// The staying peers' frames presented after the leave, all together.
    public var framesAfter: Int
    /// Timeline changes the staying peers made after the host left that took effect.
    public var changesAfter: Int

    /// The figures of one run.
    public init(leftAt: Double, spread: Percentiles?, framesDropped: Int, framesSkipped: Int, framesAfter: Int, changesAfter: Int) {
        self.leftAt = leftAt
        self.spread = spread
        self.framesDropped = framesDropped
        self.framesSkipped = framesSkipped
        self.framesAfter = framesAfter
        self.changesAfter = changesAfter
    }
}

/// What `streamed` adds to a run's figures: joiners without the file, streaming the host's
/// (targets: from `joined` to the first frame ≤ 1 s, a seek ≤ 500 ms to the
/// first frame at the new position). Durations are milliseconds.
public struct StreamedFigures: Sendable, Codable, Equatable {
    /// Joiners that streamed.
    public var joiners: Int
    /// From each streaming joiner's `joined` event (the instant it printed it) to its first
    /// presented frame, still or moving.
    public var joinedToFirstFrame: Percentiles?
    /// From each seek command being written to each streaming joiner's first frame at the new
    /// position (media time within half a second after the target), over the seeks it saw.
    public var seekToFirstFrame: Percentiles?
    /// Seeks a streaming joiner never showed the new position of (before the next change).
    public var seeksMissed: Int
    /// The spread between the host and the streaming joiners alone, over every frame all of
    /// them showed.
    public var spread: Percentiles?

    /// The figures of one run.
    public init(joiners: Int, joinedToFirstFrame: Percentiles?, seekToFirstFrame: Percentiles?, seeksMissed: Int, spread: Percentiles?) {
        self.joiners = joiners
        self.joinedToFirstFrame = joinedToFirstFrame
        self.seekToFirstFrame = seekToFirstFrame
        self.seeksMissed = seeksMissed
        self.spread = spread
    }
}
