import Synchronization
import TandemClock
import TandemNet

/// The session clock of a relay in a cluster: its own clock (`SessionEpochClock`, with whatever
/// error `--clock-offset`/`--clock-drift-ppm` injected) mapped to the cluster's time through the
/// mapping `ClusterSessionTime` publishes.
///
/// Give it to `RelayServer` in place of the epoch clock: the relay's time replies, its stamps and
/// its timers then run on cluster time. Until the first mapping is published it reads the base
/// clock itself (a relay serves nothing before `ClusterSessionTime.start` returns). Any thread.
public final class ClusterSessionClock: MonotonicDerivedClock, Sendable {
    /// The relay's own clock, which the mapping starts from.
    public let base: any MonotonicDerivedClock
    private let published: Mutex<ClusterClockMapping?>

    /// A clock over `base` with no mapping yet.
    public init(base: any MonotonicDerivedClock) {
        self.base = base
        published = Mutex(nil)
    }

    /// The mapping in force, nil before the first.
    public var mapping: ClusterClockMapping? { published.withLock { $0 } }

    /// Serves cluster time through `mapping` from now on.
    public func publish(_ mapping: ClusterClockMapping) {
        published.withLock { $0 = mapping }
    }

    /// The cluster time now.
    public func instant() -> LocalInstant {
        let local = base.instant().nanoseconds
        return LocalInstant(nanoseconds: published.withLock { $0?.clusterTime(atLocal: local) ?? local })
    }

    /// The cluster time this relay serves at host instant `host`: what a benchmark compares
    /// across relays of one host, at one instant.
    public func localInstant(atHost host: HostInstant) -> LocalInstant {
        let local = base.localInstant(atHost: host).nanoseconds
        return LocalInstant(nanoseconds: published.withLock { $0?.clusterTime(atLocal: local) ?? local })
    }

    /// The host instant at which this clock reads `clusterTime`, found by Newton's method on the
    /// mapping, whose slope is within `1 ± (drift + slew rate)`.
    public func hostInstant(atLocal clusterTime: LocalInstant) -> HostInstant {
        guard let mapping else { return base.hostInstant(atLocal: clusterTime) }
        let localTime = clusterTime.nanoseconds
        var local = localTime - Int64(mapping.offset(atLocal: localTime).rounded())
        for _ in 0..<8 {
            let error = mapping.clusterTime(atLocal: local) - localTime
            if error == 0 { break }
            local -= error
        }
        return base.hostInstant(atLocal: LocalInstant(nanoseconds: local))
    }

    /// How far the time served may be from the authority's, in nanoseconds (0 for the authority
    /// itself, or before a mapping), excluding path asymmetry.
    public func errorBound() -> Int64 {
        let local = base.instant().nanoseconds
        return published.withLock { Int64(($0?.errorBound(atLocal: local) ?? 0).rounded(.up)) }
    }
}
