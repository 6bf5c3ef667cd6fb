import TandemClock

/// Runs several estimators side by side on one sample stream and records each one's error
/// against the true session time at every evaluation instant.
public struct ClockErrorRecorder: Sendable {
    private var estimators: [any SessionTimeEstimator]
    /// Evaluation instants, in nanoseconds since the scenario began.
    private var times: [Int64] = []
    /// Per estimator, estimated minus true session time at each instant (nil before it knew).
    private var errors: [[Int64?]]
    /// Samples fed so far.
    public private(set) var sampleCount = 0

    /// Records the given estimators.
    public init(estimators: [any SessionTimeEstimator]) {
        self.estimators = estimators
        errors = Array(repeating: [], count: estimators.count)
    }

    /// Our estimator (envelope and weighted least squares) and the three references.
    public static func standardLineup() -> [any SessionTimeEstimator] {
        var leastSquares = SessionClock.Configuration()
        leastSquares.estimator.fitMethod = .weightedLeastSquares
        return [
            SessionClock(),
            SessionClock(configuration: leastSquares),
            LatestSampleEstimator(),
            MinimumDelayFilterEstimator(depth: 8),
            MedianOffsetEstimator(depth: 200),
        ]
    }

    /// Feeds a sample, applied at local time `now`, to every estimator.
    public mutating func learn(_ sample: ClockSample, now: Int64) {
        sampleCount += 1
        for index in estimators.indices { estimators[index].learn(sample, now: now) }
    }

    /// Compares every estimator with the truth: at `elapsed` nanoseconds into the scenario the
    /// session clock read `sessionTime` and the participant's clock `localTime`.
    public mutating func evaluate(elapsed: Int64, sessionTime: Int64, localTime: Int64) {
        times.append(elapsed)
        for index in estimators.indices {
            errors[index].append(estimators[index].estimatedSessionTime(atLocal: localTime).map { $0 - sessionTime })
        }
    }

    /// Each estimator's trace, in lineup order.
    public var traces: [ClockErrorTrace] {
        estimators.indices.map { ClockErrorTrace(name: estimators[$0].name, times: times, errors: errors[$0]) }
    }

    /// Each estimator's result in `scenario`, pooled over the recorders of several runs.
    public static func results(of runs: [ClockErrorRecorder], in scenario: ClockScenario) -> [ClockEstimatorResult] {
        guard let first = runs.first else { return [] }
        return first.estimators.indices.map { index in
            ClockEstimatorResult(traces: runs.map { $0.traces[index] }, scenario: scenario)
        }
    }
}
