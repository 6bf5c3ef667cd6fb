/// A local clock derived exactly from the raw monotonic clock (`CLOCK_MONOTONIC`), so that an
/// instant on it can be turned into the raw instant a player sleeps to, and back.
///
/// The system clock is the raw clock itself; a `SkewedClock` over a derived clock is derived too.
/// Presentation logs record raw instants, the ground truth that every process on a host shares.
public protocol MonotonicDerivedClock: LocalClock {
    /// The raw monotonic reading at which this clock reads `localTime`.
    func monotonicTime(atLocal localTime: Int64) -> Int64
    /// This clock's reading when the raw monotonic clock reads `monotonicTime`.
    func localTime(atMonotonic monotonicTime: Int64) -> Int64
}

extension SystemClock: MonotonicDerivedClock {
    /// The same instant: the system clock is the raw monotonic clock.
    public func monotonicTime(atLocal localTime: Int64) -> Int64 { localTime }
    /// The same instant.
    public func localTime(atMonotonic monotonicTime: Int64) -> Int64 { monotonicTime }
}

extension SkewedClock: MonotonicDerivedClock where Base: MonotonicDerivedClock {
    /// Through the base clock.
    public func monotonicTime(atLocal localTime: Int64) -> Int64 {
        base.monotonicTime(atLocal: baseTime(atLocal: localTime))
    }

    /// Through the base clock.
    public func localTime(atMonotonic monotonicTime: Int64) -> Int64 {
        localTime(atBase: base.localTime(atMonotonic: monotonicTime))
    }
}
