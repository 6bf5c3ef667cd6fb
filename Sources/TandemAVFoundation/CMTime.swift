/// Core Media's `CMTimeValue`: a time's count of `timescale` units.
public typealias CMTimeValue = Int64
/// Core Media's `CMTimeScale`: units per second.
public typealias CMTimeScale = Int32
/// Core Media's `CMTimeEpoch`: which of several loops through the same times a time lies in.
public typealias CMTimeEpoch = Int64

/// Core Media's `CMTimeFlags`: whether a time is valid, rounded, infinite or indefinite.
public struct CMTimeFlags: OptionSet, Sendable, Hashable {
    /// The flags' bits, as Core Media numbers them.
    public let rawValue: UInt32
    /// The flags of `rawValue`.
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// The time is valid; without it nothing else of it means anything.
    public static let valid = CMTimeFlags(rawValue: 1 << 0)
    /// The time was rounded from a more precise one.
    public static let hasBeenRounded = CMTimeFlags(rawValue: 1 << 1)
    /// The time is later than any other (its value means nothing).
    public static let positiveInfinity = CMTimeFlags(rawValue: 1 << 2)
    /// The time is earlier than any other (its value means nothing).
    public static let negativeInfinity = CMTimeFlags(rawValue: 1 << 3)
    /// The time is unknown (its value means nothing).
    public static let indefinite = CMTimeFlags(rawValue: 1 << 4)
    /// The flags that make a time non-numeric.
    public static let impliedValueFlagsMask: CMTimeFlags = [.positiveInfinity, .negativeInfinity, .indefinite]
}

/// Core Media's `CMTimeRoundingMethod`: how a time is rounded to a coarser timescale.
public enum CMTimeRoundingMethod: Sendable, Hashable {
    /// To the nearest unit; halfway rounds away from zero.
    case roundHalfAwayFromZero
    /// Toward zero (truncation).
    case roundTowardZero
    /// Away from zero.
    case roundAwayFromZero
    /// As `roundHalfAwayFromZero` (Core Media's QuickTime rule only differs for timescales
    /// above QuickTime's, which it then truncates: not needed here).
    case quickTime
    /// Up.
    case roundTowardPositiveInfinity
    /// Down.
    case roundTowardNegativeInfinity

    /// Core Media's default: `roundHalfAwayFromZero`.
    public static let `default` = CMTimeRoundingMethod.roundHalfAwayFromZero
}

/// Core Media's `CMTime`, a rational time (`value / timescale` seconds), for code written for Apple
/// platforms: its constructors, `seconds`, `zero`, `invalid` and the infinities, exact comparison
/// and exact addition and subtraction, `convertScale(_:method:)`. Tandem's APIs take `ItemTime`
/// (nanoseconds); `ItemTime(_:)` and `CMTime(_:)` convert, rounding to the nearest nanosecond
/// in integers (never through `Double`).
///
/// Equality and order are Core Media's: by value (`1/600` equals `100/60000`); an invalid time
/// equals every invalid time and is later than any other, then positive infinity, then the
/// indefinite time; negative infinity is earlier than any other.
public struct CMTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The count of `timescale` units.
    public var value: CMTimeValue
    /// Units per second; a valid numeric time has one above 0.
    public var timescale: CMTimeScale
    /// Whether the time is valid, rounded, infinite or indefinite.
    public var flags: CMTimeFlags
    /// The loop the time lies in; times of a later epoch are later.
    public var epoch: CMTimeEpoch

    /// A time of these parts, taken as they are.
    public init(value: CMTimeValue, timescale: CMTimeScale, flags: CMTimeFlags, epoch: CMTimeEpoch) {
        self.value = value
        self.timescale = timescale
        self.flags = flags
        self.epoch = epoch
    }

    /// `value / timescale` seconds, as Core Media's `CMTime(value:timescale:)`; invalid when
    /// `timescale` is not above 0.
    public init(value: CMTimeValue, timescale: CMTimeScale) {
        self.init(value: value, timescale: timescale, flags: timescale > 0 ? .valid : [], epoch: 0)
    }

    /// `seconds` in units of `preferredTimescale`, rounded to the nearest unit (halfway away from
    /// zero), as Core Media's `CMTime(seconds:preferredTimescale:)`. NaN, or a timescale not above
    /// 0, makes the invalid time; an infinity or a count beyond `Int64` makes that infinity.
    public init(seconds: Double, preferredTimescale: CMTimeScale) {
        guard !seconds.isNaN, preferredTimescale > 0 else {
            self = .invalid
            return
        }
        let units = (seconds * Double(preferredTimescale)).rounded(.toNearestOrAwayFromZero)
        // 2^63 is the first Double beyond Int64.
        guard units.isFinite, units.magnitude < 9_223_372_036_854_775_808.0 else {
            self = seconds > 0 ? .positiveInfinity : .negativeInfinity
            return
        }
        let value = Int64(units)
        let rounded = Double(value) != seconds * Double(preferredTimescale)
        self.init(value: value, timescale: preferredTimescale, flags: rounded ? [.valid, .hasBeenRounded] : .valid, epoch: 0)
    }

    /// No time: 0 seconds.
    public static let zero = CMTime(value: 0, timescale: 1)
    /// The invalid time, as Core Media's `CMTime.invalid`.
    public static let invalid = CMTime(value: 0, timescale: 0, flags: [], epoch: 0)
    /// Later than any numeric time.
    public static let positiveInfinity = CMTime(value: 0, timescale: 0, flags: [.valid, .positiveInfinity], epoch: 0)
    /// Earlier than any numeric time.
    public static let negativeInfinity = CMTime(value: 0, timescale: 0, flags: [.valid, .negativeInfinity], epoch: 0)
    /// An unknown time.
    public static let indefinite = CMTime(value: 0, timescale: 0, flags: [.valid, .indefinite], epoch: 0)

    /// Whether the time is valid.
    public var isValid: Bool { flags.contains(.valid) }
    /// Whether the time is valid and a number: not infinite, not indefinite.
    public var isNumeric: Bool { isValid && flags.isDisjoint(with: .impliedValueFlagsMask) && timescale > 0 }
    /// Whether the time is positive infinity.
    public var isPositiveInfinity: Bool { isValid && flags.contains(.positiveInfinity) }
    /// Whether the time is negative infinity.
    public var isNegativeInfinity: Bool { isValid && flags.contains(.negativeInfinity) }
    /// Whether the time is indefinite.
    public var isIndefinite: Bool { isValid && flags.contains(.indefinite) }
    /// Whether the time was rounded from a more precise one.
    public var hasBeenRounded: Bool { flags.contains(.hasBeenRounded) }

    /// The time in seconds, as Core Media's `seconds`: NaN for an invalid or indefinite time, an
    /// infinity for an infinite one.
    public var seconds: Double {
        if isNumeric { return Double(value) / Double(timescale) }
        if isPositiveInfinity { return .infinity }
        if isNegativeInfinity { return -.infinity }
        return .nan
    }

    /// The time in units of `newTimescale`, rounded by `method`, as Core Media's
    /// `convertScale(_:method:)`; computed in integers, so that a time whose units divide evenly
    /// is converted exactly. A non-numeric time stays as it is; a timescale not above 0 gives the
    /// invalid time; a count beyond `Int64` gives the infinity of its sign.
    public func convertScale(_ newTimescale: CMTimeScale, method: CMTimeRoundingMethod) -> CMTime {
        guard isNumeric else { return self }
        guard newTimescale > 0 else { return .invalid }
        guard newTimescale != timescale else { return self }
        guard let (converted, rounded) = Self.rescale(value, from: timescale, to: newTimescale, method: method) else {
            return value < 0 ? .negativeInfinity : .positiveInfinity
        }
        var flags = self.flags
        if rounded { flags.insert(.hasBeenRounded) }
        return CMTime(value: converted, timescale: newTimescale, flags: flags, epoch: epoch)
    }

    /// `value * to / from`, rounded by `method`, and whether it was rounded; nil when it does not
    /// fit `Int64`. Exact: the product is held in 128 bits.
    static func rescale(_ value: Int64, from: Int32, to: Int32, method: CMTimeRoundingMethod) -> (Int64, Bool)? {
        let negative = value < 0
        let product = value.magnitude.multipliedFullWidth(by: UInt64(to))
        let divisor = UInt64(from)
        guard product.high < divisor else { return nil }
        var (quotient, remainder) = divisor.dividingFullWidth(product)
        let up: Bool
        switch method {
        case .roundTowardZero: up = false
        case .roundAwayFromZero: up = remainder > 0
        case .roundHalfAwayFromZero, .quickTime: up = remainder > 0 && remainder >= divisor - remainder
        case .roundTowardPositiveInfinity: up = remainder > 0 && !negative
        case .roundTowardNegativeInfinity: up = remainder > 0 && negative
        }
        if up { quotient += 1 }
        if negative {
            guard quotient <= UInt64(Int64.max) + 1 else { return nil }
            return (quotient == UInt64(Int64.max) + 1 ? .min : -Int64(quotient), remainder > 0)
        }
        guard quotient <= UInt64(Int64.max) else { return nil }
        return (Int64(quotient), remainder > 0)
    }

    /// `value / timescale` seconds, or the kind of non-numeric time.
    public var description: String {
        if isNumeric { return "\(value)/\(timescale) = \(seconds) s" }
        if !isValid { return "invalid" }
        if isPositiveInfinity { return "+infinity" }
        if isNegativeInfinity { return "-infinity" }
        return "indefinite"
    }
}
