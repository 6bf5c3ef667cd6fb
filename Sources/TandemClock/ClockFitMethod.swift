/// How an estimator turns its window of samples into an offset and a drift.
public enum ClockFitMethod: String, Sendable, Hashable, Codable, CaseIterable {
    /// Fits the lower envelopes of the two one-way delays (see `EnvelopeFit`). Uses the fastest
    /// trip in each direction, even when they come from different exchanges.
    case envelope
    /// A least-squares line through the offsets, weighted towards exchanges of low round-trip
    /// delay (see `WeightedLeastSquaresFit`).
    case weightedLeastSquares
}
