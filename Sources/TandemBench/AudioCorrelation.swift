import Foundation

/// Where a short window of one signal lies in another, to a fraction of a sample: the peak of
/// their normalised cross-correlation, refined by band-limited (windowed-sinc) interpolation of
/// the correlation around it.
///
/// Sampled sound is band-limited, and so is its cross-correlation as a function of the lag: the
/// correlation between the integer lags is the sinc-weighted sum of its values at them, so the
/// refined peak has no bias of the kind a parabola through three points has on a sharp peak.
public enum AudioCorrelation {
    /// A window located in the other signal.
    public struct Match: Sendable, Equatable {
        /// The position in the searched signal of the window's first sample (fractional).
        public var position: Double
        /// The normalised correlation at the peak (1: the same waveform, scaled).
        public var peak: Double
    }

    /// How many correlation values either side of a point the interpolation weighs.
    static let interpolationRadius = 16

    /// Where `window` (`length` samples of `reference` from `start`) best matches `signal` at
    /// positions `center - radius … center + radius`; nil when either is too quiet (below
    /// `silence`, an RMS amplitude on a full scale of 1) or the peak is below `minimumPeak`, or
    /// the peak lies on the edge of the search (the match may lie beyond it).
    public static func locate(_ reference: [Float], start: Int, length: Int, in signal: [Float], center: Int, radius: Int,
                              silence: Float = 0.003, minimumPeak: Double = 0.8) -> Match? {
        guard length > 0, radius >= 0, start >= 0, start + length <= reference.count else { return nil }
        let margin = interpolationRadius + 1
        let low = max(0, center - radius - margin)
        let high = min(signal.count - length, center + radius + margin)
        guard high >= low else { return nil }
        return reference.withUnsafeBufferPointer { x in
            signal.withUnsafeBufferPointer { y in
                let window = UnsafeBufferPointer(rebasing: x[start..<(start + length)])
                var windowEnergy: Double = 0
                for value in window { windowEnergy += Double(value) * Double(value) }
                guard windowEnergy >= Double(length) * Double(silence) * Double(silence) else { return nil }
                // The searched signal's energy under the window at each position, from running sums.
                var energy = [Double](repeating: 0, count: high - low + 1)
                var running: Double = 0
                for index in low..<(low + length) { running += Double(y[index]) * Double(y[index]) }
                energy[0] = running
                if high > low {
                    for position in (low + 1)...high {
                        let leaving = Double(y[position - 1])
                        let entering = Double(y[position + length - 1])
                        running += entering * entering - leaving * leaving
                        energy[position - low] = max(running, 0)
                    }
                }
                var correlation = [Double](repeating: 0, count: high - low + 1)
                for position in low...high {
                    let denominator = (windowEnergy * energy[position - low]).squareRoot()
                    guard denominator > 0 else { continue }
                    correlation[position - low] = dot(window, y, at: position) / denominator
                }
                let searchLow = max(low, center - radius)
                let searchHigh = min(high, center + radius)
                guard searchHigh >= searchLow else { return nil }
                var best = searchLow
                for position in searchLow...searchHigh where correlation[position - low] > correlation[best - low] {
                    best = position
                }
                // On the edge of the search, the true peak may lie outside it; near the signal's
                // ends, the interpolation lacks the values on one side.
                guard radius == 0 || (best != center - radius && best != center + radius),
                      best - low >= interpolationRadius, high - best >= interpolationRadius else { return nil }
                // The peak between samples: a match half a sample off correlates much less at
                // either neighbouring sample than at the true lag.
                let refined = refine(correlation, around: best - low)
                guard refined.value >= minimumPeak else { return nil }
                return Match(position: Double(low) + refined.offset, peak: min(1, refined.value))
            }
        }
    }

    /// The sum of `window[i] × signal[position + i]`.
    private static func dot(_ window: UnsafeBufferPointer<Float>, _ signal: UnsafeBufferPointer<Float>, at position: Int) -> Double {
        // Four running sums, in Float over short stretches, let the compiler vectorise the loop.
        var total: Double = 0
        var index = 0
        let count = window.count
        while index < count {
            let end = min(count, index + 256)
            var s0: Float = 0, s1: Float = 0, s2: Float = 0, s3: Float = 0
            var i = index
            while i + 4 <= end {
                s0 += window[i] * signal[position + i]
                s1 += window[i + 1] * signal[position + i + 1]
                s2 += window[i + 2] * signal[position + i + 2]
                s3 += window[i + 3] * signal[position + i + 3]
                i += 4
            }
            while i < end {
                s0 += window[i] * signal[position + i]
                i += 1
            }
            total += Double(s0 + s1 + s2 + s3)
            index = end
        }
        return total
    }

    /// The maximum of the band-limited interpolation of `values` within a sample of index
    /// `peak`: its fractional index and its value (golden-section search on a Hann-windowed sinc).
    static func refine(_ values: [Double], around peak: Int) -> (offset: Double, value: Double) {
        var low = Double(peak) - 1
        var high = Double(peak) + 1
        let ratio = (5.0.squareRoot() - 1) / 2
        var a = high - ratio * (high - low)
        var b = low + ratio * (high - low)
        var fa = interpolate(values, at: a)
        var fb = interpolate(values, at: b)
        for _ in 0..<40 {
            if fa > fb {
                high = b
                b = a
                fb = fa
                a = high - ratio * (high - low)
                fa = interpolate(values, at: a)
            } else {
                low = a
                a = b
                fa = fb
                b = low + ratio * (high - low)
                fb = interpolate(values, at: b)
            }
        }
        let offset = (low + high) / 2
        let value = interpolate(values, at: offset)
        // Never worse than the sample itself (at the array's ends the interpolation thins out).
        return value >= values[peak] ? (offset, value) : (Double(peak), values[peak])
    }

    /// The Hann-windowed sinc interpolation of `values` at fractional index `x`.
    static func interpolate(_ values: [Double], at x: Double) -> Double {
        let radius = interpolationRadius
        let base = Int(x.rounded(.down))
        var sum: Double = 0
        for index in (base - radius + 1)...(base + radius) where index >= 0 && index < values.count {
            let distance = x - Double(index)
            guard abs(distance) < Double(radius) else { continue }
            let window = 0.5 * (1 + cos(Double.pi * distance / Double(radius)))
            sum += values[index] * sinc(distance) * window
        }
        return sum
    }

    private static func sinc(_ x: Double) -> Double {
        abs(x) < 1e-12 ? 1 : sin(Double.pi * x) / (Double.pi * x)
    }
}
