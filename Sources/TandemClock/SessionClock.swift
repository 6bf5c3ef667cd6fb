/// A participant's view of the session clock: maps local monotonic time to session time and back.
///
/// Feed it samples with `onSample(_:now:)`; read it with `sessionTime(atLocal:)`. The mapping is
/// slewed, never stepped, once it exists: session time as seen through it never goes backwards
/// and changes rate by at most `Configuration.maximumSlewRate`. A pure value; the shell that owns
/// it decides when to read the local clock.
public struct SessionClock: Sendable {
    /// Tuning knobs.
    public struct Configuration: Sendable, Hashable, Codable {
        /// How samples become an estimate.
        public var estimator = ClockEstimator.Configuration()
        /// The fastest the published offset may move towards a new estimate, in nanoseconds per
        /// nanosecond. At 5 % a 1 ms correction is absorbed within 20 ms: one video frame shown
        /// 1 ms early, instead of a frame skipped or repeated.
        public var maximumSlewRate: Double = 0.05

        /// The default configuration.
        public init() {}
    }

    /// The configuration in use.
    public let configuration: Configuration
    /// The estimator behind the clock.
    public private(set) var estimator: ClockEstimator
    private var mapping: SlewedMapping?

    /// Creates a clock that knows nothing yet.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        self.estimator = ClockEstimator(configuration: configuration.estimator)
    }

    /// Whether a session time can be given yet (after the first sample).
    public var isSynchronized: Bool { mapping != nil }

    /// The estimate the clock is converging on, without slewing.
    public var estimate: ClockEstimate? { estimator.estimate }

    /// Adds a sample; `now` is the local instant at which it is applied, so that the published
    /// mapping stays continuous from that instant on.
    @discardableResult
    public mutating func onSample(_ sample: ClockSample, now: LocalInstant) -> ClockEstimator.Verdict {
        let verdict = estimator.add(sample)
        guard verdict == .kept, let estimate = estimator.estimate else { return verdict }
        if mapping == nil {
            // Nothing was published before, so there is nothing to jump from.
            mapping = SlewedMapping(estimate: estimate, at: now.nanoseconds, slewRate: configuration.maximumSlewRate)
        } else {
            mapping?.retarget(estimate, at: now.nanoseconds)
        }
        return verdict
    }

    /// The session instant at local instant `local`, or nil before the first sample.
    ///
    /// For any increasing sequence of local instants read after the same samples, the results
    /// never decrease.
    public func sessionTime(atLocal local: LocalInstant) -> SessionInstant? {
        mapping.map { SessionInstant(nanoseconds: $0.sessionTime(atLocal: local.nanoseconds)) }
    }

    /// The local instant at which the session clock will read `session`, or nil before the first
    /// sample. Use it to schedule local wake-ups for session-time deadlines.
    public func localTime(atSession session: SessionInstant) -> LocalInstant? {
        mapping.map { LocalInstant(nanoseconds: $0.localTime(atSession: session.nanoseconds)) }
    }

    /// How far the published session time may be off at `local`: the estimate's bound plus any
    /// correction still being slewed in. Path asymmetry, which no exchange of timestamps can
    /// observe, comes on top; it is at most half the best round trip.
    public func errorBound(atLocal local: LocalInstant) -> TimeSpan? {
        guard let mapping else { return nil }
        let bound = mapping.estimate.errorBound(atLocal: local.nanoseconds)
            + abs(mapping.remainingCorrection(atLocal: local.nanoseconds))
        return TimeSpan(nanoseconds: Int64(saturating: bound.rounded(.up)))
    }

    /// How many session seconds pass per local second, as the estimator fitted it (one plus its
    /// drift): the slope the published mapping converges on, a correction still being slewed in
    /// left out (it enters as the offset the mapping publishes); nil before the first sample.
    public var sessionSecondsPerLocalSecond: Double? {
        mapping.map { 1 + $0.estimate.drift }
    }

    /// A summary for display, as of `local`; nil before the first sample.
    public func statistics(atLocal local: LocalInstant) -> SessionClockStatistics? {
        guard let mapping, let errorBound = errorBound(atLocal: local) else { return nil }
        return SessionClockStatistics(
            offset: Int64(mapping.offset(atLocal: local.nanoseconds).rounded()),
            driftPPM: mapping.estimate.driftPPM,
            errorBound: errorBound.nanoseconds,
            bestRoundTrip: estimator.bestRoundTrip ?? 0,
            medianRoundTrip: estimator.medianRoundTrip ?? 0,
            samplesKept: estimator.keptCount,
            samplesRejected: estimator.rejectedCount
        )
    }
}

extension SessionClock {
    /// `onSample(_:now:)` with the local instant in bare nanoseconds.
    @available(*, deprecated, message: "pass now as a LocalInstant")
    @discardableResult
    public mutating func onSample(_ sample: ClockSample, now: Int64) -> ClockEstimator.Verdict {
        onSample(sample, now: LocalInstant(nanoseconds: now))
    }

    /// `sessionTime(atLocal:)` in bare nanoseconds.
    @available(*, deprecated, message: "pass a LocalInstant; the result is a SessionInstant")
    public func sessionTime(atLocal localTime: Int64) -> Int64? {
        sessionTime(atLocal: LocalInstant(nanoseconds: localTime))?.nanoseconds
    }

    /// `localTime(atSession:)` in bare nanoseconds.
    @available(*, deprecated, message: "pass a SessionInstant; the result is a LocalInstant")
    public func localTime(atSession sessionTime: Int64) -> Int64? {
        localTime(atSession: SessionInstant(nanoseconds: sessionTime))?.nanoseconds
    }

    /// `errorBound(atLocal:)` in bare nanoseconds.
    @available(*, deprecated, message: "pass a LocalInstant; the result is a TimeSpan")
    public func errorBound(atLocal localTime: Int64) -> Int64? {
        errorBound(atLocal: LocalInstant(nanoseconds: localTime))?.nanoseconds
    }

    /// `statistics(atLocal:)` with the local instant in bare nanoseconds.
    @available(*, deprecated, message: "pass a LocalInstant")
    public func statistics(atLocal localTime: Int64) -> SessionClockStatistics? {
        statistics(atLocal: LocalInstant(nanoseconds: localTime))
    }
}
