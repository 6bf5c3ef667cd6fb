import TandemClock

// Tests write instants as nanosecond literals (`.seek(to: 2_000_000_000)`); the typed time of
// the sources keeps its kinds apart all the same: a literal takes the kind its place asks for,
// and a value of one kind is never taken for another. Tests only.

extension TimePoint: ExpressibleByIntegerLiteral {
    /// The instant `value` ns of the kind its place asks for.
    public init(integerLiteral value: Int64) { self.init(nanoseconds: value) }
}

extension TimeSpan: ExpressibleByIntegerLiteral {
    /// A span of `value` ns.
    public init(integerLiteral value: Int64) { self.init(nanoseconds: value) }
}

extension TimePoint {
    /// The latest instant (tests' name for `distantFuture`).
    static var max: Self { .distantFuture }
    /// The earliest instant (tests' name for `distantPast`).
    static var min: Self { .distantPast }
}

/// The session instant `nanoseconds`.
func sessionNS(_ nanoseconds: Int64) -> SessionInstant { SessionInstant(nanoseconds: nanoseconds) }
/// The media time `nanoseconds`.
func itemNS(_ nanoseconds: Int64) -> ItemTime { ItemTime(nanoseconds: nanoseconds) }
/// The host instant `nanoseconds`.
func hostNS(_ nanoseconds: Int64) -> HostInstant { HostInstant(nanoseconds: nanoseconds) }
/// The span `nanoseconds`.
func spanNS(_ nanoseconds: Int64) -> TimeSpan { TimeSpan(nanoseconds: nanoseconds) }
