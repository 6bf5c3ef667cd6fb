import Foundation
import TandemClock
import TandemNet

/// Where a participant learns the session clock (the relay's monotonic clock) from.
public protocol SessionClockSource: Sendable {
    /// The session time at local instant `localTime`, once known.
    func sessionTime(atLocal localTime: Int64) -> Int64?
    /// The local instant at session time `sessionTime`, once known.
    func localTime(atSession sessionTime: Int64) -> Int64?
    /// How far off the estimate may be at local instant `localTime` (ns), once known.
    func errorBound(atLocal localTime: Int64) -> Int64?
    /// Stops whatever keeps the estimate current.
    func stop()
}

/// How a center's sessions learn the session clock.
public enum SessionClockSetting: Sendable {
    /// Probe the relay's time service (the relay's UDP port, as the invite names it): the way
    /// participants in other processes or on other hosts do.
    case probe
    /// The relay runs in this process on `clock`: read it directly, exactly.
    case derived(from: any MonotonicDerivedClock)
}

/// The session clock estimated by probing the relay's time service over UDP.
final class ProbedSessionClock: SessionClockSource {
    private let prober: ClockProber

    init(server: SocketAddress, localClock: any LocalClock) throws {
        prober = try ClockProber(server: server, clock: localClock)
        prober.start()
    }

    func sessionTime(atLocal localTime: Int64) -> Int64? { prober.sessionClock.sessionTime(atLocal: localTime) }
    func localTime(atSession sessionTime: Int64) -> Int64? { prober.sessionClock.localTime(atSession: sessionTime) }
    func errorBound(atLocal localTime: Int64) -> Int64? { prober.sessionClock.errorBound(atLocal: localTime) }
    func stop() { prober.stop() }
}

/// The session clock of a relay in this process, read exactly through the raw monotonic clock
/// that both clocks derive from.
struct DerivedSessionClock: SessionClockSource {
    let relayClock: any MonotonicDerivedClock
    let localClock: any MonotonicDerivedClock

    func sessionTime(atLocal localTime: Int64) -> Int64? {
        relayClock.localTime(atMonotonic: localClock.monotonicTime(atLocal: localTime))
    }

    func localTime(atSession sessionTime: Int64) -> Int64? {
        localClock.localTime(atMonotonic: relayClock.monotonicTime(atLocal: sessionTime))
    }

    func errorBound(atLocal localTime: Int64) -> Int64? { 0 }
    func stop() {}
}
