/// Arithmetic on instants and media times (signed 64-bit nanoseconds) that saturates at the
/// bounds of `Int64` instead of trapping.
///
/// Every conversion from `Double` to nanoseconds on the timeline's paths goes through
/// `Int64(saturating:)`, and every sum or difference of instants that a peer or the relay can
/// push to an extreme through `saturatingAdding` and `saturatingSubtracting`: a timeline that
/// validation let through is far from the bounds, and one that somehow is not is shown at the
/// end of time, never a crash. One place for all of it, so that the players, the coordinator
/// and the timelines agree on what an extreme value becomes.
extension Int64 {
    /// `value` rounded to the nearest integer, or the bound of `Int64` it lies beyond; 0 for NaN.
    package init(saturating value: Double) {
        let rounded = value.rounded()
        if rounded.isNaN {
            self = 0
        } else if rounded >= 9_223_372_036_854_775_807.0 {
            // The nearest Double to Int64.max is 2^63, one past it.
            self = .max
        } else if rounded <= -9_223_372_036_854_775_808.0 {
            self = .min
        } else {
            self = Int64(rounded)
        }
    }

    /// `self + other`, or the bound of `Int64` the sum overflows past.
    package func saturatingAdding(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        guard overflow else { return sum }
        return other > 0 ? .max : .min
    }

    /// `self - other`, or the bound of `Int64` the difference overflows past.
    package func saturatingSubtracting(_ other: Int64) -> Int64 {
        let (difference, overflow) = subtractingReportingOverflow(other)
        guard overflow else { return difference }
        return other < 0 ? .max : .min
    }

    /// `self × factor`, rounded and saturated: the media time that passes in a span of `self`
    /// at rate `factor`.
    package func saturatingScaled(by factor: Double) -> Int64 {
        Int64(saturating: Double(self) * factor)
    }

    /// `self ÷ divisor`, rounded and saturated: the span in which media time `self` passes at
    /// rate `divisor`.
    package func saturatingDivided(by divisor: Double) -> Int64 {
        Int64(saturating: Double(self) / divisor)
    }

    /// `|self - other|`, or `Int64.max` when that does not fit.
    package func saturatingDistance(to other: Int64) -> Int64 {
        let difference = saturatingSubtracting(other)
        return difference == .min ? .max : Swift.abs(difference)
    }

    /// `self` within `range`.
    package func clamped(to range: ClosedRange<Int64>) -> Int64 {
        Swift.min(Swift.max(self, range.lowerBound), range.upperBound)
    }
}
