import TandemClock

/// Conversions between Core Media's rational times and Tandem's nanoseconds.
extension CMTime {
    /// The nanoseconds' timescale, at which every `ItemTime` is exact.
    public static let nanosecondTimescale: CMTimeScale = 1_000_000_000

    /// `itemTime` exactly, in nanoseconds (`timescale` 1,000,000,000).
    public init(_ itemTime: ItemTime) {
        self.init(value: itemTime.nanoseconds, timescale: Self.nanosecondTimescale)
    }

    /// `span` exactly, in nanoseconds (`timescale` 1,000,000,000).
    public init(_ span: TimeSpan) {
        self.init(value: span.nanoseconds, timescale: Self.nanosecondTimescale)
    }

    /// The time in whole nanoseconds, the nearest (halfway away from zero), saturated at the
    /// bounds of `Int64`; nil unless the time is numeric.
    public var nanoseconds: Int64? {
        guard isNumeric else { return nil }
        guard let (nanoseconds, _) = Self.rescale(value, from: timescale, to: Self.nanosecondTimescale, method: .default) else {
            return value < 0 ? .min : .max
        }
        return nanoseconds
    }
}

extension TimePoint where Kind == ItemTimeKind {
    /// The media time `time` names, to the nearest nanosecond (computed in integers); nil when
    /// it is not numeric (invalid, indefinite, infinite), since no position is named.
    public init?(_ time: CMTime) {
        guard let nanoseconds = time.nanoseconds else { return nil }
        self.init(nanoseconds: nanoseconds)
    }
}

extension TimePoint where Kind == HostTimeKind {
    /// The host instant `time` names (Core Media's host clock time is, here, the monotonic
    /// clock's), to the nearest nanosecond; nil when it is not numeric.
    public init?(_ time: CMTime) {
        guard let nanoseconds = time.nanoseconds else { return nil }
        self.init(nanoseconds: nanoseconds)
    }
}
