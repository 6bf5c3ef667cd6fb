/// A kind of time: the clock an instant is read on, or the media an item time lies in. Instants of
/// different kinds are different types (`TimePoint<Kind>`), so that the compiler rejects adding a
/// session instant to a host instant, or comparing a media position with a wall-clock reading.
public protocol TimeKind: Sendable {}

/// The session clock: the relay's monotonic clock, which every participant estimates.
public enum SessionTimeKind: TimeKind {}
/// A participant's own clock (a `LocalClock`), which may run with an offset and a drift.
public enum LocalTimeKind: TimeKind {}
/// The host's raw monotonic clock (`CLOCK_MONOTONIC`): what a player sleeps to, and what
/// presentation logs record.
public enum HostTimeKind: TimeKind {}
/// A position within a media item (its presentation timestamps).
public enum ItemTimeKind: TimeKind {}

/// An instant of one kind of time, in nanoseconds. Only meaningful arithmetic exists: an instant
/// plus or minus a span is an instant of the same kind, and two instants of one kind differ by a
/// span. All of it saturates at the bounds of `Int64` rather than trapping, so that an extreme
/// value a peer proposed becomes the end of time, never a crash.
public struct TimePoint<Kind: TimeKind>: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// Nanoseconds on the kind's clock (or since the item's origin, for item time).
    public var nanoseconds: Int64

    /// The instant `nanoseconds` on the kind's clock.
    public init(nanoseconds: Int64) {
        self.nanoseconds = nanoseconds
    }

    /// The kind's origin.
    public static var zero: Self { Self(nanoseconds: 0) }

    /// The earliest instant representable.
    public static var distantPast: Self { Self(nanoseconds: .min) }

    /// The latest instant representable.
    public static var distantFuture: Self { Self(nanoseconds: .max) }

    /// Decodes the bare number of nanoseconds, as it is encoded.
    public init(from decoder: any Decoder) throws {
        nanoseconds = try decoder.singleValueContainer().decode(Int64.self)
    }

    /// Encodes the bare number of nanoseconds, so that typed fields cost no more than `Int64`s.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(nanoseconds)
    }

    /// Seconds, for people to read.
    public var description: String { TimeSpan(nanoseconds: nanoseconds).description }

    /// Whether `lhs` comes first.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

    /// The instant `span` after `instant`, saturating.
    public static func + (instant: Self, span: TimeSpan) -> Self {
        Self(nanoseconds: instant.nanoseconds.saturatingAdding(span.nanoseconds))
    }

    /// The instant `span` before `instant`, saturating.
    public static func - (instant: Self, span: TimeSpan) -> Self {
        Self(nanoseconds: instant.nanoseconds.saturatingSubtracting(span.nanoseconds))
    }

    /// How long after `earlier` `later` is (negative if it is before), saturating.
    public static func - (later: Self, earlier: Self) -> TimeSpan {
        TimeSpan(nanoseconds: later.nanoseconds.saturatingSubtracting(earlier.nanoseconds))
    }

    /// Moves `instant` `span` later, saturating.
    public static func += (instant: inout Self, span: TimeSpan) { instant = instant + span }

    /// Moves `instant` `span` earlier, saturating.
    public static func -= (instant: inout Self, span: TimeSpan) { instant = instant - span }

    /// This instant within `range`.
    public func clamped(to range: ClosedRange<Self>) -> Self {
        Swift.min(Swift.max(self, range.lowerBound), range.upperBound)
    }
}

/// An instant of the session clock.
public typealias SessionInstant = TimePoint<SessionTimeKind>
/// An instant of a participant's own clock.
public typealias LocalInstant = TimePoint<LocalTimeKind>
/// An instant of the host's raw monotonic clock.
public typealias HostInstant = TimePoint<HostTimeKind>
/// A position within a media item.
public typealias ItemTime = TimePoint<ItemTimeKind>

/// A length of time in nanoseconds, of no clock in particular: the difference of two instants of
/// one kind, or what is added to one. Scaling by a rate saturates, and a NaN rate scales to 0.
public struct TimeSpan: Hashable, Comparable, Sendable, Codable, AdditiveArithmetic, CustomStringConvertible {
    /// The length in nanoseconds.
    public var nanoseconds: Int64

    /// A span of `nanoseconds`.
    public init(nanoseconds: Int64) {
        self.nanoseconds = nanoseconds
    }

    /// No time.
    public static var zero: TimeSpan { TimeSpan(nanoseconds: 0) }

    /// A span of `seconds`, rounded to the nanosecond and saturated.
    public static func seconds(_ seconds: Double) -> TimeSpan {
        TimeSpan(nanoseconds: Int64(saturating: seconds * 1e9))
    }

    /// A span of `milliseconds`, saturated.
    public static func milliseconds(_ milliseconds: Int64) -> TimeSpan {
        TimeSpan(nanoseconds: Int64(saturating: Double(milliseconds) * 1e6))
    }

    /// A span of `microseconds`, saturated.
    public static func microseconds(_ microseconds: Int64) -> TimeSpan {
        TimeSpan(nanoseconds: Int64(saturating: Double(microseconds) * 1e3))
    }

    /// The span in seconds.
    public var seconds: Double { Double(nanoseconds) / 1e9 }

    /// Decodes the bare number of nanoseconds, as it is encoded.
    public init(from decoder: any Decoder) throws {
        nanoseconds = try decoder.singleValueContainer().decode(Int64.self)
    }

    /// Encodes the bare number of nanoseconds.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(nanoseconds)
    }

    /// Seconds, to the microsecond.
    public var description: String {
        let microseconds = nanoseconds / 1_000
        let sign = microseconds < 0 ? "-" : ""
        let magnitude = microseconds.magnitude
        let fraction = String(magnitude % 1_000_000)
        return "\(sign)\(magnitude / 1_000_000).\(String(repeating: "0", count: 6 - fraction.count))\(fraction) s"
    }

    /// Whether `lhs` is shorter.
    public static func < (lhs: TimeSpan, rhs: TimeSpan) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

    /// The sum, saturating.
    public static func + (lhs: TimeSpan, rhs: TimeSpan) -> TimeSpan {
        TimeSpan(nanoseconds: lhs.nanoseconds.saturatingAdding(rhs.nanoseconds))
    }

    /// The difference, saturating.
    public static func - (lhs: TimeSpan, rhs: TimeSpan) -> TimeSpan {
        TimeSpan(nanoseconds: lhs.nanoseconds.saturatingSubtracting(rhs.nanoseconds))
    }

    /// The opposite span, saturating (the negation of `Int64.min` is `Int64.max`).
    public static prefix func - (span: TimeSpan) -> TimeSpan {
        TimeSpan(nanoseconds: Int64(0).saturatingSubtracting(span.nanoseconds))
    }

    /// `span` scaled by `factor` (the media time that passes in `span` at rate `factor`),
    /// rounded and saturated; 0 for a NaN factor.
    public static func * (span: TimeSpan, factor: Double) -> TimeSpan {
        TimeSpan(nanoseconds: span.nanoseconds.saturatingScaled(by: factor))
    }

    /// `span` divided by `divisor` (the span in which media time `span` passes at rate
    /// `divisor`), rounded and saturated.
    public static func / (span: TimeSpan, divisor: Double) -> TimeSpan {
        TimeSpan(nanoseconds: span.nanoseconds.saturatingDivided(by: divisor))
    }

    /// The span's length, saturating (`Int64.min` becomes `Int64.max`).
    public var magnitude: TimeSpan {
        TimeSpan(nanoseconds: nanoseconds == .min ? .max : Swift.abs(nanoseconds))
    }
}
