/// Reference estimator: the offset of the most recent sample, as a naive client would use it.
public struct LatestSampleEstimator: SessionTimeEstimator {
    private var offset: Int64?

    /// Creates the estimator.
    public init() {}

    /// `latest`.
    public var name: String { "latest" }

    /// Replaces the offset with the sample's.
    public mutating func learn(_ sample: ClockSample, now: Int64) { offset = sample.offset }

    /// Local time plus the latest offset.
    public func estimatedSessionTime(atLocal localTime: Int64) -> Int64? { offset.map { localTime + $0 } }
}
