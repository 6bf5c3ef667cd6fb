/// Fits offset and drift by least squares through the exchanges' offsets, weighted towards those
/// of low round-trip delay.
///
/// An exchange whose round trip is close to the fastest one seen cannot have queued much in either
/// direction, so its offset is trustworthy; weights fall with the square of the excess delay, as in
/// the NTP clock filter's preference for the lowest-delay sample (RFC 5905, section 10), but
/// without discarding the rest. Kept beside `EnvelopeFit` for comparison in the benchmark.
struct WeightedLeastSquaresFit {
    private let times: [Double]
    private let offsets: [Double]
    private let delays: [Double]

    init(samples: [ClockSample], referenceTime: Int64, baseOffset: Int64) {
        times = samples.map { Double($0.localMidpoint - referenceTime) }
        offsets = samples.map { Double($0.offset - baseOffset) }
        delays = samples.map { Double($0.roundTripDelay) }
    }

    /// The fitted offset at the reference time (relative to the base offset), the drift, the
    /// weighted root-mean-square residual plus the drift's uncertainty carried to the reference
    /// time, and the drift's uncertainty.
    func fit(estimatingDrift: Bool, priorDrift: Double, maximumDrift: Double) -> (offset: Double, drift: Double, errorScale: Double, driftUncertainty: Double) {
        let sortedDelays = delays.sorted()
        let fastest = sortedDelays[0]
        let median = sortedDelays[sortedDelays.count / 2]
        // Only the faster half speaks; the softening keeps one lucky exchange from taking over.
        let softening = max((median - fastest) / 4, 1_000)
        let weights = delays.map { $0 <= median ? 1 / (($0 - fastest + softening) * ($0 - fastest + softening)) : 0 }
        let total = weights.reduce(0, +)
        let meanTime = zip(weights, times).reduce(0) { $0 + $1.0 * $1.1 } / total
        let meanOffset = zip(weights, offsets).reduce(0) { $0 + $1.0 * $1.1 } / total
        var drift = priorDrift
        if estimatingDrift {
            var covariance = 0.0
            var variance = 0.0
            for index in times.indices {
                covariance += weights[index] * (times[index] - meanTime) * (offsets[index] - meanOffset)
                variance += weights[index] * (times[index] - meanTime) * (times[index] - meanTime)
            }
            if variance > 0 { drift = min(max(covariance / variance, -maximumDrift), maximumDrift) }
        }
        let offset = meanOffset - drift * meanTime
        var squares = 0.0
        for index in times.indices {
            let residual = offsets[index] - (offset + drift * times[index])
            squares += weights[index] * residual * residual
        }
        let spread = (squares / total).squareRoot()
        let span = (times.max() ?? 0) - (times.min() ?? 0)
        let driftUncertainty = estimatingDrift && span > 0 ? 2 * spread / span : maximumDrift
        return (offset, drift, spread + driftUncertainty * abs(meanTime), driftUncertainty)
    }
}
