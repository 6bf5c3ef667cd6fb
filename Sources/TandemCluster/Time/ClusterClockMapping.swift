import TandemClock
import TandemNet

/// How a relay of a cluster turns its own session clock (its `SessionEpochClock`, with whatever
/// error was injected) into the cluster's session time: a pure value.
///
/// `cluster(local) = local + offset(local)`, where the offset is the latest estimate of the
/// authority's clock (`ClockEstimate`: offset and drift), plus whatever part of the previous
/// mapping's disagreement with that estimate has not been slewed away yet. A retarget keeps the
/// published time where it was at that instant and moves towards the new estimate at no more than
/// `slewRate` nanoseconds per nanosecond, so the cluster time a relay serves never jumps and never
/// goes backwards: its rate stays within `1 + drift ± slewRate`, which participants' estimators
/// follow as an ordinary drift. (`SlewedMapping` in TandemClock does the same for a participant at
/// a far larger rate, 5 %: a relay's rate changes reach every participant's estimate, so a relay
/// slews at parts per million.) The one discontinuity is `stepped(to:at:)`, which a relay uses
/// before it has served any time, or when two clusters that never agreed merge.
public struct ClusterClockMapping: Sendable, Hashable, Codable {
    /// The estimate converged on: the authority's time as a function of the local clock.
    public private(set) var estimate: ClockEstimate
    /// Published offset minus the estimate's offset at `since`, in nanoseconds.
    public private(set) var residual: Double
    /// The local time at which `residual` holds.
    public private(set) var since: Int64
    /// The fastest the published offset moves towards the estimate, beyond the estimate's drift.
    public let slewRate: Double

    /// The mapping of a relay that is its own authority: cluster time is its local time.
    public static func identity(at now: Int64, slewRate: Double) -> ClusterClockMapping {
        ClusterClockMapping(estimate: ClockEstimate(referenceTime: now, offset: 0, drift: 0, errorBound: 0, driftUncertainty: 0),
                            residual: 0, since: now, slewRate: slewRate)
    }

    private init(estimate: ClockEstimate, residual: Double, since: Int64, slewRate: Double) {
        precondition(slewRate > 0 && slewRate < 1, "a slew rate is between 0 and 1")
        self.estimate = estimate
        self.residual = residual
        self.since = since
        self.slewRate = slewRate
    }

    /// The part of the last correction not yet applied at `localTime`, in nanoseconds.
    public func remainingCorrection(atLocal localTime: Int64) -> Double {
        let elapsed = Double(max(localTime - since, 0))
        let remaining = max(abs(residual) - slewRate * elapsed, 0)
        return residual < 0 ? -remaining : remaining
    }

    /// Cluster time minus local time at `localTime`, in nanoseconds.
    public func offset(atLocal localTime: Int64) -> Double {
        estimate.offset(atLocal: localTime) + remainingCorrection(atLocal: localTime)
    }

    /// The cluster time published for local time `localTime`.
    public func clusterTime(atLocal localTime: Int64) -> Int64 {
        localTime + Int64(offset(atLocal: localTime).rounded())
    }

    /// How far the published time may be from the authority's at `localTime`: the estimate's
    /// bound, grown by its drift uncertainty since it was made, plus the correction still to slew.
    /// Path asymmetry, which no exchange of timestamps reveals, comes on top.
    public func errorBound(atLocal localTime: Int64) -> Double {
        estimate.errorBound(atLocal: localTime) + abs(remainingCorrection(atLocal: localTime))
    }

    /// The correction a retarget to `newEstimate` at `now` would have to slew away, in ns:
    /// published offset minus the new estimate's.
    public func correction(to newEstimate: ClockEstimate, at now: Int64) -> Double {
        offset(atLocal: now) - newEstimate.offset(atLocal: now)
    }

    /// Converges on `newEstimate` from what is published at `now`, without a jump.
    public func retargeted(to newEstimate: ClockEstimate, at now: Int64) -> ClusterClockMapping {
        ClusterClockMapping(estimate: newEstimate, residual: correction(to: newEstimate, at: now), since: now, slewRate: slewRate)
    }

    /// Takes `newEstimate` at once, jumping by its correction.
    public func stepped(to newEstimate: ClockEstimate, at now: Int64) -> ClusterClockMapping {
        ClusterClockMapping(estimate: newEstimate, residual: 0, since: now, slewRate: slewRate)
    }
}
