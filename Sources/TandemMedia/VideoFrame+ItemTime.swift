import TandemClock

extension VideoFrame {
    /// The item time at which the frame starts.
    public var itemTime: ItemTime { ItemTime(nanoseconds: presentationTime) }

    /// How long the frame is shown at rate 1.
    public var length: TimeSpan { TimeSpan(nanoseconds: duration) }

    /// The item time at which the next frame starts.
    public var itemEndTime: ItemTime { itemTime + length }
}

extension AudioChunk {
    /// The item time of the first sample.
    public var itemTime: ItemTime { ItemTime(nanoseconds: presentationTime) }

    /// How long the chunk plays at rate 1.
    public var length: TimeSpan { TimeSpan(nanoseconds: duration) }

    /// The item time just after the last sample.
    public var itemEndTime: ItemTime { itemTime + length }
}
