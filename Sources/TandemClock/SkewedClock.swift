/// A clock that runs off another by a fixed offset and a constant drift.
///
/// `local = base + offset + drift × (base − origin)`, with `drift` in parts per million. It lets
/// every process on one machine have a genuinely different clock, so that clock estimation has a
/// real problem to solve in tests and benchmarks. The mapping is exact and invertible, so a
/// benchmark can tell the true session time behind any local reading.
public struct SkewedClock<Base: LocalClock>: LocalClock {
    /// The clock this one is derived from.
    public let base: Base
    /// Nanoseconds added at `origin`.
    public let offset: Int64
    /// How much faster this clock runs than `base`, in parts per million (negative is slower).
    public let driftPPM: Double
    /// The base time at which the offset is exactly `offset`.
    public let origin: Int64

    /// Creates a clock that reads `offset` ahead of `base` at `origin` and gains `driftPPM`.
    public init(base: Base, offset: Int64, driftPPM: Double, origin: Int64 = 0) {
        self.base = base
        self.offset = offset
        self.driftPPM = driftPPM
        self.origin = origin
    }

    /// The current local instant.
    public func instant() -> LocalInstant {
        LocalInstant(nanoseconds: localTime(atBase: base.instant().nanoseconds))
    }

    /// The reading this clock gives when `base` reads `baseTime`.
    public func localTime(atBase baseTime: Int64) -> Int64 {
        let elapsed = baseTime - origin
        return baseTime + offset + Int64((Double(elapsed) * driftPPM / 1e6).rounded())
    }

    /// The `base` reading at which this clock reads `localTime`.
    public func baseTime(atLocal localTime: Int64) -> Int64 {
        let elapsedLocal = Double(localTime - offset - origin)
        return origin + Int64((elapsedLocal / (1 + driftPPM / 1e6)).rounded())
    }
}
