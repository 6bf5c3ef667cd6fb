/// Reference estimator: the offset of the lowest-delay sample among the last eight.
///
/// This is the NTP clock filter's core idea (RFC 5905, section 10, an eight-stage shift register
/// whose lowest-delay entry is chosen) and what Jellyfin's SyncPlay does (jellyfin-web,
/// `src/components/syncPlay/core/timeSync/TimeSync.js`: eight tracked measurements, the one of
/// minimum delay wins).
public struct MinimumDelayFilterEstimator: SessionTimeEstimator {
    private var recent: [ClockSample] = []
    /// How many samples the filter holds.
    public let depth: Int

    /// Creates the filter with `depth` stages.
    public init(depth: Int = 8) { self.depth = depth }

    /// `ntp-min-of-8`.
    public var name: String { "ntp-min-of-\(depth)" }

    /// Shifts the sample into the filter.
    public mutating func learn(_ sample: ClockSample, now: Int64) {
        recent.append(sample)
        if recent.count > depth { recent.removeFirst() }
    }

    /// Local time plus the offset of the held sample with the lowest round trip.
    public func estimatedSessionTime(atLocal localTime: Int64) -> Int64? {
        recent.min { $0.roundTripDelay < $1.roundTripDelay }.map { localTime + $0.offset }
    }
}
