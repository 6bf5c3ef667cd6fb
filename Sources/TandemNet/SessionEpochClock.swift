import TandemClock

/// The relay's session clock: the raw monotonic clock plus a fixed offset, so that the session
/// time a relay stamps on its time replies and ordered broadcasts says nothing about how long
/// its host has been up (`CLOCK_MONOTONIC` counts from boot).
///
/// `random()` starts the session clock at a random reading, independent of the host's uptime:
/// what `tandem serve` and `tandem host` use unless told otherwise. A fixed `offset` (0 makes the
/// session clock the raw monotonic clock) is for measurement on one's own machine, where
/// presentation logs on the raw monotonic clock are compared with session instants. The mapping
/// to and from the raw clock is exact integer arithmetic, so a host's participants that read the
/// relay's clock directly (`DerivedSessionClock`) see exactly what probers estimate.
///
/// As a benchmarking aid (`tandem serve --clock-offset S --clock-drift-ppm PPM`), the clock may
/// also carry an injected error, `injecting(offset:driftPPM:)`: a further offset, and a drift
/// that makes it gain `driftPPM` parts per million on the raw clock from the moment it was
/// injected, so that participants' clock synchronisation against a relay has real work to do.
/// With drift the mapping rounds to the nearest nanosecond each way.
public struct SessionEpochClock: MonotonicDerivedClock {
    /// Session time minus raw monotonic time at `origin`, in nanoseconds.
    public let offset: Int64
    /// How much faster than the raw monotonic clock this clock runs, in parts per million.
    public let driftPPM: Double
    /// The raw monotonic reading from which the drift counts (at which the session time is
    /// exactly the raw reading plus `offset`).
    public let origin: Int64

    /// The largest injected offset: a day either way, in nanoseconds.
    public static let maximumInjectedOffset: Int64 = 86_400_000_000_000
    /// The largest injected drift, in parts per million either way.
    public static let maximumInjectedDrift = 1_000.0

    /// The random session clock starts in this range of readings: above 2^44 ns (about five
    /// hours), below 2^52 ns (about 52 days), so that it looks like any uptime, stays far from
    /// overflow, and converts to `Double` exactly for years.
    public static let randomStart: Range<Int64> = (1 << 44)..<(1 << 52)
    /// The largest offset accepted from a user: readings stay far from overflow.
    public static let maximumOffset: Int64 = 1 << 60

    /// A session clock `offset` ns ahead of the raw monotonic clock.
    public init(offset: Int64) {
        precondition(abs(offset) <= SessionEpochClock.maximumOffset, "a session epoch offset is within ±2^60 ns")
        self.offset = offset
        driftPPM = 0
        origin = 0
    }

    private init(offset: Int64, driftPPM: Double, origin: Int64) {
        self.offset = offset
        self.driftPPM = driftPPM
        self.origin = origin
    }

    /// This clock with an injected error: `offset` ns more (within ±`maximumInjectedOffset`)
    /// and gaining `driftPPM` (within ±`maximumInjectedDrift`) from now on. Nil outside the
    /// bounds, or on a clock that drifts already.
    public func injecting(offset injected: Int64, driftPPM drift: Double) -> SessionEpochClock? {
        guard driftPPM == 0, abs(injected) <= SessionEpochClock.maximumInjectedOffset,
              drift.isFinite, abs(drift) <= SessionEpochClock.maximumInjectedDrift else { return nil }
        return SessionEpochClock(offset: offset + injected, driftPPM: drift, origin: HostInstant.now().nanoseconds)
    }

    /// A session clock that reads a random value in `randomStart` now.
    public static func random() -> SessionEpochClock {
        var generator = SystemRandomNumberGenerator()
        let start = Int64.random(in: randomStart, using: &generator)
        return SessionEpochClock(offset: start - HostInstant.now().nanoseconds)
    }

    /// The clock a command-line value names: `random`, or an offset in nanoseconds (`0`: the raw
    /// monotonic clock); nil for anything else.
    public init?(argument: String) {
        if argument == "random" {
            self = .random()
            return
        }
        guard let offset = Int64(argument), abs(offset) <= SessionEpochClock.maximumOffset else { return nil }
        self.init(offset: offset)
    }

    /// The session time now.
    public func instant() -> LocalInstant { localInstant(atHost: HostInstant.now()) }

    /// The host instant at session time `local` (this clock's reading).
    public func hostInstant(atLocal local: LocalInstant) -> HostInstant {
        let localTime = local.nanoseconds
        guard driftPPM != 0 else { return HostInstant(nanoseconds: localTime - offset) }
        return HostInstant(nanoseconds: origin + Int64((Double(localTime - offset - origin) / (1 + driftPPM / 1e6)).rounded()))
    }

    /// The session time (this clock's reading) at host instant `host`.
    public func localInstant(atHost host: HostInstant) -> LocalInstant {
        let monotonicTime = host.nanoseconds
        guard driftPPM != 0 else { return LocalInstant(nanoseconds: monotonicTime + offset) }
        return LocalInstant(nanoseconds: monotonicTime + offset + Int64((Double(monotonicTime - origin) * driftPPM / 1e6).rounded()))
    }
}
