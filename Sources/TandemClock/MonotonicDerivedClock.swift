/// A local clock derived exactly from the raw monotonic clock (`CLOCK_MONOTONIC`), so that an
/// instant on it can be turned into the host instant a player sleeps to, and back.
///
/// The system clock is the raw clock itself; a `SkewedClock` over a derived clock is derived too.
/// Presentation logs record host instants, the ground truth that every process on a host shares.
///
/// A conforming type implements `hostInstant(atLocal:)` and `localInstant(atHost:)`; one written
/// against the bare forms implements `monotonicTime(atLocal:)` and `localTime(atMonotonic:)`
/// instead, and the typed forms then come from them.
public protocol MonotonicDerivedClock: LocalClock {
    /// The host instant at which this clock reads `local`.
    func hostInstant(atLocal local: LocalInstant) -> HostInstant
    /// This clock's reading at host instant `host`.
    func localInstant(atHost host: HostInstant) -> LocalInstant

    /// The raw monotonic reading (ns) at which this clock reads `localTime` (ns).
    @available(*, deprecated, renamed: "hostInstant(atLocal:)")
    func monotonicTime(atLocal localTime: Int64) -> Int64
    /// This clock's reading (ns) when the raw monotonic clock reads `monotonicTime` (ns).
    @available(*, deprecated, renamed: "localInstant(atHost:)")
    func localTime(atMonotonic monotonicTime: Int64) -> Int64
}

extension MonotonicDerivedClock {
    /// Through `monotonicTime(atLocal:)`, for a clock that implements only the bare forms.
    @available(*, deprecated, message: "implement hostInstant(atLocal:) in place of monotonicTime(atLocal:)")
    public func hostInstant(atLocal local: LocalInstant) -> HostInstant {
        HostInstant(nanoseconds: monotonicTime(atLocal: local.nanoseconds))
    }

    /// Through `localTime(atMonotonic:)`, for a clock that implements only the bare forms.
    @available(*, deprecated, message: "implement localInstant(atHost:) in place of localTime(atMonotonic:)")
    public func localInstant(atHost host: HostInstant) -> LocalInstant {
        LocalInstant(nanoseconds: localTime(atMonotonic: host.nanoseconds))
    }

    /// `hostInstant(atLocal:)` in bare nanoseconds.
    @available(*, deprecated, renamed: "hostInstant(atLocal:)")
    public func monotonicTime(atLocal localTime: Int64) -> Int64 {
        hostInstant(atLocal: LocalInstant(nanoseconds: localTime)).nanoseconds
    }

    /// `localInstant(atHost:)` in bare nanoseconds.
    @available(*, deprecated, renamed: "localInstant(atHost:)")
    public func localTime(atMonotonic monotonicTime: Int64) -> Int64 {
        localInstant(atHost: HostInstant(nanoseconds: monotonicTime)).nanoseconds
    }
}

extension SystemClock: MonotonicDerivedClock {
    /// The same instant: the system clock is the raw monotonic clock.
    public func hostInstant(atLocal local: LocalInstant) -> HostInstant { HostInstant(nanoseconds: local.nanoseconds) }
    /// The same instant.
    public func localInstant(atHost host: HostInstant) -> LocalInstant { LocalInstant(nanoseconds: host.nanoseconds) }
}

extension SkewedClock: MonotonicDerivedClock where Base: MonotonicDerivedClock {
    /// Through the base clock.
    public func hostInstant(atLocal local: LocalInstant) -> HostInstant {
        base.hostInstant(atLocal: LocalInstant(nanoseconds: baseTime(atLocal: local.nanoseconds)))
    }

    /// Through the base clock.
    public func localInstant(atHost host: HostInstant) -> LocalInstant {
        LocalInstant(nanoseconds: localTime(atBase: base.localInstant(atHost: host).nanoseconds))
    }
}
