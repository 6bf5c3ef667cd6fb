/// Reference estimator: the median of the last 200 offsets.
///
/// This is what Snapcast's client does (snapcast, `client/timeProvider.cpp`: a buffer of 200
/// differences to the server, whose median is used).
public struct MedianOffsetEstimator: SessionTimeEstimator {
    private var recent: [Int64] = []
    /// How many offsets the median is taken over.
    public let depth: Int

    /// Creates the estimator over the last `depth` offsets.
    public init(depth: Int = 200) { self.depth = depth }

    /// `median-of-200`.
    public var name: String { "median-of-\(depth)" }

    /// Appends the sample's offset.
    public mutating func learn(_ sample: ClockSample, now: Int64) {
        recent.append(sample.offset)
        if recent.count > depth { recent.removeFirst() }
    }

    /// Local time plus the median offset.
    public func estimatedSessionTime(atLocal localTime: Int64) -> Int64? {
        guard !recent.isEmpty else { return nil }
        let sorted = recent.sorted()
        return localTime + sorted[sorted.count / 2]
    }
}
