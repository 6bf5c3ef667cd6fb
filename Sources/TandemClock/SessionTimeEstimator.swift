/// Anything that learns session time from clock samples; the benchmark runs several side by side
/// on the same sample stream.
public protocol SessionTimeEstimator: Sendable {
    /// A short name for tables.
    var name: String { get }
    /// Learns from a sample, applied at local time `now`.
    mutating func learn(_ sample: ClockSample, now: Int64)
    /// The estimated session time at `localTime`, or nil before any sample.
    func estimatedSessionTime(atLocal localTime: Int64) -> Int64?
}

extension SessionClock: SessionTimeEstimator {
    /// `tandem` (`tandem-wls` with the weighted least-squares fit): the slewed session clock, as
    /// a participant uses it.
    public var name: String {
        configuration.estimator.fitMethod == .envelope ? "tandem" : "tandem-wls"
    }

    /// Feeds the sample to `onSample(_:now:)`.
    public mutating func learn(_ sample: ClockSample, now: Int64) { onSample(sample, now: LocalInstant(nanoseconds: now)) }

    /// The published (slewed) session time.
    public func estimatedSessionTime(atLocal localTime: Int64) -> Int64? {
        sessionTime(atLocal: LocalInstant(nanoseconds: localTime))?.nanoseconds
    }
}
