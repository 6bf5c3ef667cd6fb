import TandemNet
/// How late the proxy delivered items against their scheduled instants: its own added error.
///
/// Microsecond bins up to 100 ms, one overflow bin beyond, and the exact maximum, so that memory
/// stays fixed however long the proxy runs. Early deliveries (which the shell never makes) would
/// count as zero.
public struct LatenessHistogram: Sendable, Hashable {
    /// The width of a bin in nanoseconds.
    public static let binWidth: Int64 = 1_000
    /// How many bins below the overflow bin.
    public static let binCount = 100_000
    private var bins: [UInt32]
    private var overflow = 0
    /// How many deliveries were recorded.
    public private(set) var count = 0
    /// The latest delivery, in nanoseconds.
    public private(set) var maximum: Int64 = 0
    /// The sum of the lateness, for the mean.
    public private(set) var total: Int64 = 0

    /// An empty histogram.
    public init() { bins = [UInt32](repeating: 0, count: Self.binCount) }

    /// Records one delivery `lateness` nanoseconds after its scheduled instant.
    public mutating func record(_ lateness: Int64) {
        let value = max(lateness, 0)
        let bin = Int(value / Self.binWidth)
        if bin < Self.binCount { bins[bin] &+= 1 } else { overflow += 1 }
        count += 1
        total += value
        maximum = max(maximum, value)
    }

    /// The lateness below which a fraction `q` (0…1) of deliveries fell, to the bin's upper edge
    /// (so never optimistic by more than a microsecond); nil when empty.
    public func quantile(_ q: Double) -> Int64? {
        guard count > 0 else { return nil }
        let rank = max(1, Int((q * Double(count)).rounded(.up)))
        var seen = 0
        for (index, binCount) in bins.enumerated() where binCount > 0 {
            seen += Int(binCount)
            if seen >= rank { return min((Int64(index) + 1) * Self.binWidth, maximum) }
        }
        return maximum
    }

    /// The mean lateness; nil when empty.
    public var mean: Int64? { count > 0 ? total / Int64(count) : nil }

    /// `p50 … / p99 … / max … ms` over the deliveries, or "no deliveries".
    public var summary: String {
        guard let p50 = quantile(0.5), let p99 = quantile(0.99) else { return "no deliveries" }
        func ms(_ value: Int64) -> String { String(format3: Double(value) / 1e6) }
        return "p50 \(ms(p50)) ms / p99 \(ms(p99)) ms / max \(ms(maximum)) ms over \(count) deliveries"
    }
}
