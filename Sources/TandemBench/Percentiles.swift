/// Order statistics of a sample: the median, tail percentiles and the extremes.
public struct Percentiles: Sendable, Codable, Equatable {
    /// How many values.
    public let count: Int
    /// The median.
    public let p50: Double
    /// The 90th percentile.
    public let p90: Double
    /// The 95th percentile.
    public let p95: Double
    /// The 99th percentile.
    public let p99: Double
    /// The smallest value.
    public let min: Double
    /// The largest value.
    public let max: Double

    /// The statistics of `values` (all zero when it is empty), with linear interpolation between
    /// the nearest ranks.
    public init(_ values: [Double]) {
        let sorted = values.filter { !$0.isNaN }.sorted()
        count = sorted.count
        func quantile(_ q: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            let position = q * Double(sorted.count - 1)
            let lower = Int(position)
            let upper = Swift.min(lower + 1, sorted.count - 1)
            let fraction = position - Double(lower)
            return sorted[lower] + (sorted[upper] - sorted[lower]) * fraction
        }
        p50 = quantile(0.5)
        p90 = quantile(0.9)
        p95 = quantile(0.95)
        p99 = quantile(0.99)
        min = sorted.first ?? 0
        max = sorted.last ?? 0
    }
}
