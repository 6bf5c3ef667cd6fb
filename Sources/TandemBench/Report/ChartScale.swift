import Foundation

/// One axis laid out on the page: the range of data it shows, the pixels it spans, and its ticks.
struct ChartScale {
    /// A tick: where it is in data units and its label, nil for a minor tick drawn without one.
    typealias Tick = (value: Double, label: String?)

    /// Linear or logarithmic.
    let scale: ChartAxis.Scale
    /// The data value at `start`; for a logarithmic axis also the floor that values at or below
    /// zero are drawn at.
    let lower: Double
    /// The data value at `end`.
    let upper: Double
    /// The pixel of `lower`.
    let start: Double
    /// The pixel of `upper`.
    let end: Double
    /// The ticks, lowest first.
    let ticks: [Tick]

    /// Lays `axis` out from pixel `start` to pixel `end` (for a vertical axis the bottom is the
    /// start), fitting `values` unless the axis has a fixed range.
    init(axis: ChartAxis, values: [Double], from start: Double, to end: Double) {
        self.scale = axis.scale
        self.start = start
        self.end = end
        let finite = values.filter(\.isFinite)
        switch axis.scale {
        case .linear:
            let (lower, upper, step) = ChartScale.linearRange(axis.range, finite)
            self.lower = lower
            self.upper = upper
            self.ticks = ChartScale.linearTicks(lower, upper, step)
        case .logarithmic:
            let (lowDecade, highDecade) = ChartScale.decades(axis.range, finite)
            self.lower = pow(10, Double(lowDecade))
            self.upper = pow(10, Double(highDecade))
            self.ticks = ChartScale.decadeTicks(lowDecade, highDecade)
        }
    }

    /// The pixel of `value`; values beyond the range are drawn at its edge, and on a logarithmic
    /// axis values at or below zero at its floor.
    func position(of value: Double) -> Double {
        let fraction: Double
        switch scale {
        case .linear:
            let clamped = Swift.min(Swift.max(value, lower), upper)
            fraction = (clamped - lower) / (upper - lower)
        case .logarithmic:
            let clamped = value > 0 ? Swift.min(Swift.max(value, lower), upper) : lower
            fraction = (log10(clamped) - log10(lower)) / (log10(upper) - log10(lower))
        }
        return start + fraction * (end - start)
    }

    /// A range fitting `values` widened to whole steps of a round size (1, 2 or 5 times a power
    /// of ten) that gives about six ticks, or `fixed` as it is.
    private static func linearRange(_ fixed: ClosedRange<Double>?, _ values: [Double]) -> (Double, Double, Double) {
        if let fixed, fixed.upperBound > fixed.lowerBound {
            return (fixed.lowerBound, fixed.upperBound, roundStep((fixed.upperBound - fixed.lowerBound) / 6))
        }
        guard var low = values.min(), var high = values.max() else { return (0, 1, 0.2) }
        if low == high {
            low -= 1
            high += 1
        }
        let step = roundStep((high - low) / 6)
        return ((low / step).rounded(.down) * step, (high / step).rounded(.up) * step, step)
    }

    private static func roundStep(_ rough: Double) -> Double {
        let magnitude = pow(10, log10(rough).rounded(.down))
        let residual = rough / magnitude
        let factor: Double = residual < 1.5 ? 1 : residual < 3 ? 2 : residual < 7 ? 5 : 10
        return factor * magnitude
    }

    private static func linearTicks(_ lower: Double, _ upper: Double, _ step: Double) -> [Tick] {
        let decimals = Swift.max(0, -Int((log10(step) + 1e-9).rounded(.down)))
        var ticks: [Tick] = []
        var index = (lower / step - 1e-9).rounded(.up)
        while index * step <= upper + step * 1e-9 {
            // Rounding error would otherwise print a tick at zero as "-0.0".
            let value = abs(index * step) < step * 1e-6 ? 0 : index * step
            ticks.append((value, String(format: "%.\(decimals)f", value)))
            index += 1
        }
        return ticks
    }

    /// The whole decades that hold the positive `values`, one more below when some are at or below
    /// zero so those stand apart at the floor; 0.001 to 0.01 when none is positive.
    private static func decades(_ fixed: ClosedRange<Double>?, _ values: [Double]) -> (Int, Int) {
        if let fixed, fixed.lowerBound > 0, fixed.upperBound > fixed.lowerBound {
            let low = Int((log10(fixed.lowerBound) + 1e-9).rounded(.down))
            let high = Int((log10(fixed.upperBound) - 1e-9).rounded(.up))
            return (low, Swift.max(high, low + 1))
        }
        let positive = values.filter { $0 > 0 }
        guard let smallest = positive.min(), let largest = positive.max() else { return (-3, -2) }
        var low = Int((log10(smallest) + 1e-9).rounded(.down))
        if values.contains(where: { $0 <= 0 }) { low -= 1 }
        let high = Int((log10(largest) - 1e-9).rounded(.up))
        return (low, Swift.max(high, low + 1))
    }

    /// A labelled tick at every decade (every second or third when there are many), and unlabelled
    /// ones at 2 to 9 times each decade when there is room for them.
    private static func decadeTicks(_ low: Int, _ high: Int) -> [Tick] {
        let count = high - low
        let labelEvery = Swift.max(1, (count + 9) / 10)
        var ticks: [Tick] = []
        for decade in low...high {
            let value = pow(10, Double(decade))
            let label = (decade - low) % labelEvery == 0 ? decadeLabel(decade) : nil
            ticks.append((value, label))
            if decade < high, count <= 6 {
                for multiple in 2...9 {
                    ticks.append((Double(multiple) * value, nil))
                }
            }
        }
        return ticks
    }

    /// `0.001`, `0.1`, `1`, `1000`: a decade written out, as people read milliseconds.
    static func decadeLabel(_ decade: Int) -> String {
        decade < 0 ? String(format: "%.\(-decade)f", pow(10, Double(decade))) : String(format: "%.0f", pow(10, Double(decade)))
    }
}
