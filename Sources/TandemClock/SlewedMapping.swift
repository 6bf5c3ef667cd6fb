/// The mapping from local to session time that a participant actually uses: the latest estimate,
/// plus whatever part of the previous mapping's disagreement with it has not yet been slewed away.
///
/// When a new estimate arrives, the published offset stays where it was at that instant and then
/// moves towards the estimate at no more than `slewRate` nanoseconds per nanosecond. Because the
/// rate is below one, session time keeps moving forwards while it converges, as `adjtime(3)` does
/// for the system clock.
struct SlewedMapping: Sendable, Hashable {
    /// The estimate being converged on.
    private(set) var estimate: ClockEstimate
    /// Published offset minus the estimate's offset at `since`, in nanoseconds.
    private var residual: Double = 0
    /// The local time at which `residual` was measured.
    private var since: Int64
    /// The fastest rate at which the published offset may change, beyond the estimate's drift.
    let slewRate: Double

    init(estimate: ClockEstimate, at now: Int64, slewRate: Double) {
        self.estimate = estimate
        self.since = now
        self.slewRate = slewRate
    }

    /// Converges on `newEstimate` from the offset published at `now`, without a jump.
    mutating func retarget(_ newEstimate: ClockEstimate, at now: Int64) {
        let published = offset(atLocal: now)
        residual = published - newEstimate.offset(atLocal: now)
        since = now
        estimate = newEstimate
    }

    /// The part of the last correction not yet applied at `localTime`.
    func remainingCorrection(atLocal localTime: Int64) -> Double {
        let elapsed = Double(max(localTime - since, 0))
        let remaining = max(abs(residual) - slewRate * elapsed, 0)
        return residual < 0 ? -remaining : remaining
    }

    /// The published offset at `localTime`, in nanoseconds.
    func offset(atLocal localTime: Int64) -> Double {
        estimate.offset(atLocal: localTime) + remainingCorrection(atLocal: localTime)
    }

    /// The session time published for `localTime`.
    func sessionTime(atLocal localTime: Int64) -> Int64 {
        localTime + Int64(offset(atLocal: localTime).rounded())
    }

    /// The local time whose published session time is `sessionTime`.
    ///
    /// The mapping is piecewise linear with a slope near one, so Newton's method lands on the
    /// right piece within a few steps.
    func localTime(atSession sessionTime: Int64) -> Int64 {
        var local = sessionTime - Int64(estimate.offset(atLocal: sessionTime - Int64(estimate.offset)).rounded())
        for _ in 0..<6 {
            let error = Double(local - sessionTime) + offset(atLocal: local)
            if abs(error) < 0.5 { break }
            let slewing = remainingCorrection(atLocal: local) != 0 && local >= since
            let slope = 1 + estimate.drift - (slewing ? (residual < 0 ? -slewRate : slewRate) : 0)
            local -= Int64((error / slope).rounded())
        }
        return local
    }
}
