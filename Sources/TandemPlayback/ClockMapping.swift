import Tandem
import TandemClock

/// The session clock as this participant's host clock sees it near an instant: a session
/// instant, the host instant at which it happens, and how many session seconds pass per host
/// second (the session clock's drift against the host's raw monotonic clock, as the estimate has
/// measured it, times the local clock's own against the host's).
///
/// The one place where drift enters: the coordinator turns the shared timeline into host time
/// through it (`hostTime(atSession:)`, and `PlayCommand.rate` in media seconds per host second),
/// so that a player never converts clocks nor calls back into the coordinator. It is linear,
/// and the coordinator samples a fresh one for every decision and re-maps a playing timeline
/// every `CoordinatorMachine.Configuration.remapInterval`, so that the estimate's improvements
/// and its slews reach the player.
public struct ClockMapping: Sendable, Equatable, CustomStringConvertible {
    /// A session instant …
    public var session: SessionInstant
    /// … and the host instant at which it happens.
    public var host: HostInstant
    /// Session seconds per host second near `host`.
    public var sessionSecondsPerHostSecond: Double

    /// A mapping through (`session`, `host`) at `sessionSecondsPerHostSecond` (a rate that is not
    /// finite and positive counts as 1).
    public init(session: SessionInstant, host: HostInstant, sessionSecondsPerHostSecond: Double = 1) {
        self.session = session
        self.host = host
        self.sessionSecondsPerHostSecond = sessionSecondsPerHostSecond.isFinite && sessionSecondsPerHostSecond > 0
            ? sessionSecondsPerHostSecond : 1
    }

    /// The session instant at host instant `host`, saturating.
    public func sessionTime(atHost instant: HostInstant) -> SessionInstant {
        session + (instant - host) * sessionSecondsPerHostSecond
    }

    /// The host instant at session instant `sessionTime`, saturating.
    public func hostTime(atSession sessionTime: SessionInstant) -> HostInstant {
        host + (sessionTime - session) / sessionSecondsPerHostSecond
    }

    /// How far apart two samples are taken to measure the drift.
    static let driftSpan = TimeSpan.seconds(10)

    /// The mapping at host instant `host` from a session clock estimated on `localClock`, or nil
    /// before the estimate is known. The drift is the estimator's, when the clock knows it
    /// (`SessionClockSource.sessionSecondsPerLocalSecond(atLocal:)`), times the local clock's
    /// own rate against the host's (exact: a derived clock is arithmetic on the host's); else
    /// the estimate's slope over `driftSpan` (it is linear between its updates).
    public static func sample(_ clock: any SessionClockSource, localClock: any MonotonicDerivedClock,
                              at host: HostInstant) -> ClockMapping? {
        let later = host + driftSpan
        let local = localClock.localInstant(atHost: host)
        guard let start = clock.sessionTime(atLocal: local) else { return nil }
        if let fitted = clock.sessionSecondsPerLocalSecond(atLocal: local), fitted.isFinite, fitted > 0 {
            let localElapsed = localClock.localInstant(atHost: later) - local
            let localPerHost = localElapsed > .zero ? Double(localElapsed.nanoseconds) / Double(driftSpan.nanoseconds) : 1
            return ClockMapping(session: start, host: host, sessionSecondsPerHostSecond: fitted * localPerHost)
        }
        guard let end = clock.sessionTime(atLocal: localClock.localInstant(atHost: later)) else { return nil }
        let elapsed = end - start
        let rate = elapsed > .zero ? Double(elapsed.nanoseconds) / Double(driftSpan.nanoseconds) : 1
        return ClockMapping(session: start, host: host, sessionSecondsPerHostSecond: rate)
    }

    /// For people to read.
    public var description: String {
        "session \(session) at host \(host), " + String(format: "%.9f", sessionSecondsPerHostSecond)
    }
}
