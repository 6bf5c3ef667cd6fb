import Foundation

/// Reads a sampled signal between its samples: a Kaiser-windowed sinc over `halfTaps` samples
/// on either side, its phases tabulated and interpolated linearly between.
///
/// The playout reads media at fractional positions whenever the output's frames and the
/// timeline's do not fall on one another (always, but for a clock's exact agreement), so this is
/// what rate-1 sound passes through: its response is flat across the audible band at every
/// fraction and its delay is the fraction at every frequency, so that reading a slowly moving
/// fraction neither colours the sound nor makes it waver. A 4-point cubic would dull the top of
/// the band at half a frame and not at whole frames: a tremolo of the treble at the rate the
/// fraction turns over. At a fraction of 0 it returns the sample itself, bit-exact.
/// docs/AUDIO-BENCH.md gives its response and its cost.
enum BandLimitedInterpolator {
    /// Samples read on each side: the value at `p` uses samples floor(p) − halfTaps + 1 through
    /// floor(p) + halfTaps.
    static let halfTaps = 16
    /// Tabulated fractions between two samples (the table holds `phases + 1` rows, 0 through 1).
    static let phases = 256
    /// The Kaiser window's shape parameter: the stop band's depth against the pass band's width.
    static let beta = 9.0

    /// The kernels: row `r` holds the `2 × halfTaps` weights for the fraction r / phases, each
    /// row normalised to sum to 1 (a constant reads back exactly).
    static let table: [Float] = {
        let taps = 2 * halfTaps
        var table = [Float](repeating: 0, count: (phases + 1) * taps)
        for row in 0...phases {
            let fraction = Double(row) / Double(phases)
            var weights = [Double](repeating: 0, count: taps)
            for tap in 0..<taps {
                // Tap `tap` is sample floor(p) − halfTaps + 1 + tap, at `x` samples from p.
                let x = Double(tap - halfTaps + 1) - fraction
                weights[tap] = sinc(x) * kaiser(x / Double(halfTaps))
            }
            let sum = weights.reduce(0, +)
            for tap in 0..<taps { table[row * taps + tap] = Float(weights[tap] / sum) }
        }
        return table
    }()

    /// The value at `fraction` (0 ≤ fraction < 1) past the sample at `center` of `samples`, an
    /// interleaved buffer of `channels` channels, for `channel`. `samples` must hold frames
    /// `center − halfTaps + 1` through `center + halfTaps`.
    @inline(__always)
    static func value(_ samples: UnsafeBufferPointer<Float>, center: Int, fraction: Double, channel: Int, channels: Int) -> Float {
        if fraction == 0 { return samples[center * channels + channel] }
        let taps = 2 * halfTaps
        let scaled = fraction * Double(phases)
        let row = min(Int(scaled), phases - 1)
        let between = Float(scaled - Double(row))
        let low = row * taps, high = low + taps
        var sum: Float = 0
        var index = (center - halfTaps + 1) * channels + channel
        table.withUnsafeBufferPointer { weights in
            for tap in 0..<taps {
                let weight = weights[low + tap] + between * (weights[high + tap] - weights[low + tap])
                sum += weight * samples[index]
                index += channels
            }
        }
        return sum
    }

    private static func sinc(_ x: Double) -> Double {
        x == 0 ? 1 : sin(Double.pi * x) / (Double.pi * x)
    }

    /// The Kaiser window at `x` (−1...1 across the window; 0 outside).
    private static func kaiser(_ x: Double) -> Double {
        guard abs(x) < 1 else { return 0 }
        return besselI0(beta * (1 - x * x).squareRoot()) / besselI0(beta)
    }

    /// The modified Bessel function of the first kind, order 0, by its power series.
    private static func besselI0(_ x: Double) -> Double {
        var sum = 1.0, term = 1.0
        let quarter = x * x / 4
        for k in 1..<64 {
            term *= quarter / Double(k * k)
            sum += term
            if term < sum * 1e-17 { break }
        }
        return sum
    }
}
