/// How one estimator did in one scenario, pooled over the scenario's runs. Times and errors are in
/// nanoseconds.
public struct ClockEstimatorResult: Sendable, Hashable, Codable {
    /// The estimator's name.
    public var name: String
    /// The absolute error after the scenario's settle time, over every run.
    public var error: Percentiles?
    /// The absolute error after the settle time with the scenario's invisible bias taken out:
    /// what the estimator can be judged on. Equal to `error` when there is no bias.
    public var visibleError: Percentiles?
    /// The latest, over the runs, of the instant after which the error stayed within 1 ms to the
    /// run's end; nil if some run never got there.
    public var convergedAfter: Int64?
    /// The same, with the invisible bias taken out.
    public var visibleConvergedAfter: Int64?

    /// The tolerance that defines convergence: 1 ms.
    public static let convergenceTolerance: Int64 = 1_000_000

    /// Summarises one estimator's traces from every run of `scenario`.
    public init(traces: [ClockErrorTrace], scenario: ClockScenario) {
        name = traces.first?.name ?? "?"
        error = Percentiles(traces.flatMap { $0.absoluteErrors(from: scenario.settleTime, bias: 0) })
        visibleError = Percentiles(traces.flatMap { $0.absoluteErrors(from: scenario.settleTime, bias: scenario.invisibleBias) })
        convergedAfter = ClockEstimatorResult.worst(traces.map { $0.convergence(tolerance: Self.convergenceTolerance, bias: 0) })
        visibleConvergedAfter = ClockEstimatorResult.worst(
            traces.map { $0.convergence(tolerance: Self.convergenceTolerance, bias: scenario.invisibleBias) })
    }

    private static func worst(_ times: [Int64?]) -> Int64? {
        var latest: Int64 = 0
        for time in times {
            guard let time else { return nil }
            latest = max(latest, time)
        }
        return times.isEmpty ? nil : latest
    }
}
