/// Core Media's comparison and arithmetic, exact: numeric times are compared and added as
/// fractions, in 128-bit products, so that no timescale's units are lost to `Double`.
extension CMTime {
    /// Where a time sorts among the kinds of time: negative infinity, numbers, the indefinite
    /// time, positive infinity, then invalid times, as Core Media's `CMTimeCompare` sorts them.
    private var rank: Int {
        if !isValid { return 4 }
        if isNegativeInfinity { return 0 }
        if isPositiveInfinity { return 3 }
        if isIndefinite || timescale <= 0 { return 2 }
        return 1
    }

    /// -1, 0 or 1 as `lhs` is earlier than, the same as or later than `rhs`, as Core Media's
    /// `CMTimeCompare`.
    public static func compare(_ lhs: CMTime, _ rhs: CMTime) -> Int32 {
        let ranks = (lhs.rank, rhs.rank)
        if ranks.0 != ranks.1 { return ranks.0 < ranks.1 ? -1 : 1 }
        guard ranks.0 == 1 else { return 0 }
        if lhs.epoch != rhs.epoch { return lhs.epoch < rhs.epoch ? -1 : 1 }
        let left = lhs.value.multipliedFullWidth(by: Int64(rhs.timescale))
        let right = rhs.value.multipliedFullWidth(by: Int64(lhs.timescale))
        if left.high != right.high { return left.high < right.high ? -1 : 1 }
        if left.low != right.low { return left.low < right.low ? -1 : 1 }
        return 0
    }

    /// Whether the two are the same time, whatever their timescales.
    public static func == (lhs: CMTime, rhs: CMTime) -> Bool { compare(lhs, rhs) == 0 }

    /// Whether `lhs` is earlier.
    public static func < (lhs: CMTime, rhs: CMTime) -> Bool { compare(lhs, rhs) < 0 }

    /// Hashes the time as `==` compares it: a numeric time by its epoch and its fraction in
    /// lowest terms.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(rank)
        guard rank == 1 else { return }
        let divisor = Self.greatestCommonDivisor(value.magnitude, UInt64(timescale))
        hasher.combine(epoch)
        hasher.combine(value / Int64(divisor))
        hasher.combine(Int64(timescale) / Int64(divisor))
    }

    /// The sum, as Core Media's `CMTimeAdd`: exact in the least common multiple of the two
    /// timescales (the shared one when they are the same); when that exceeds `Int32`, in the
    /// larger timescale, rounded (`hasBeenRounded`). An infinity or the indefinite time wins
    /// over numbers; opposite infinities, or an invalid time, give the invalid time.
    public static func + (lhs: CMTime, rhs: CMTime) -> CMTime {
        combine(lhs, rhs, negatingRight: false)
    }

    /// The difference, as Core Media's `CMTimeSubtract`, by the rules of `+`.
    public static func - (lhs: CMTime, rhs: CMTime) -> CMTime {
        combine(lhs, rhs, negatingRight: true)
    }

    /// Adds `rhs` to `lhs`.
    public static func += (lhs: inout CMTime, rhs: CMTime) { lhs = lhs + rhs }

    /// Subtracts `rhs` from `lhs`.
    public static func -= (lhs: inout CMTime, rhs: CMTime) { lhs = lhs - rhs }

    private static func combine(_ lhs: CMTime, _ rhs: CMTime, negatingRight: Bool) -> CMTime {
        guard lhs.isValid, rhs.isValid else { return .invalid }
        let right = negatingRight ? rhs.negatedInfinity : rhs
        if !lhs.isNumeric || !right.isNumeric {
            let infinities = [lhs, right].filter { $0.isPositiveInfinity || $0.isNegativeInfinity }
            if infinities.contains(where: \.isPositiveInfinity) && infinities.contains(where: \.isNegativeInfinity) { return .invalid }
            if let infinity = infinities.first { return infinity.isPositiveInfinity ? .positiveInfinity : .negativeInfinity }
            return .indefinite
        }
        let common = Int64(lhs.timescale) / Int64(greatestCommonDivisor(UInt64(lhs.timescale), UInt64(rhs.timescale))) * Int64(rhs.timescale)
        let timescale = common <= Int64(Int32.max) ? Int32(common) : max(lhs.timescale, rhs.timescale)
        let a = lhs.convertScale(timescale, method: .default), b = rhs.convertScale(timescale, method: .default)
        guard a.isNumeric else { return a }
        guard b.isNumeric else { return negatingRight ? b.negatedInfinity : b }
        let (sum, overflow) = negatingRight ? a.value.subtractingReportingOverflow(b.value) : a.value.addingReportingOverflow(b.value)
        if overflow {
            // The true result has the sign of the operand that pushed it past the bound.
            return (negatingRight ? b.value < 0 : b.value > 0) ? .positiveInfinity : .negativeInfinity
        }
        var flags: CMTimeFlags = .valid
        if a.hasBeenRounded || b.hasBeenRounded { flags.insert(.hasBeenRounded) }
        return CMTime(value: sum, timescale: timescale, flags: flags, epoch: lhs.epoch)
    }

    /// For subtraction: an infinity turned to the other one; anything else unchanged.
    private var negatedInfinity: CMTime {
        if isPositiveInfinity { return .negativeInfinity }
        if isNegativeInfinity { return .positiveInfinity }
        return self
    }

    static func greatestCommonDivisor(_ a: UInt64, _ b: UInt64) -> UInt64 {
        var (a, b) = (a, b)
        while b != 0 { (a, b) = (b, a % b) }
        return max(a, 1)
    }
}
