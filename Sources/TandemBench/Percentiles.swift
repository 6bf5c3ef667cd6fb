/// The usual summary of a distribution: median, tail percentiles and extremes, by nearest rank.
public struct Percentiles: Sendable, Hashable, Codable {
    /// How many values were summarised.
    public var count: Int
    /// The smallest value.
    public var min: Double
    /// The median.
    public var p50: Double
    /// The 90th percentile.
    public var p90: Double
    /// The 95th percentile.
    public var p95: Double
    /// The 99th percentile.
    public var p99: Double
    /// The largest value.
    public var max: Double

    /// Summarises `values`; nil when there are none.
    public init?(_ values: [Double]) {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        count = sorted.count
        min = sorted[0]
        p50 = Percentiles.percentile(0.50, ofSorted: sorted)
        p90 = Percentiles.percentile(0.90, ofSorted: sorted)
        p95 = Percentiles.percentile(0.95, ofSorted: sorted)
        p99 = Percentiles.percentile(0.99, ofSorted: sorted)
        max = sorted[sorted.count - 1]
    }

    /// The `fraction` quantile of already sorted, non-empty `values`, by nearest rank: the
    /// smallest value with at least that fraction of values at or below it.
    public static func percentile(_ fraction: Double, ofSorted values: [Double]) -> Double {
        precondition(!values.isEmpty, "no values")
        let rank = Int((fraction * Double(values.count)).rounded(.up))
        return values[Swift.min(Swift.max(rank, 1), values.count) - 1]
    }
}
