/// How one estimator did in one scenario. Times and errors are in nanoseconds.
public struct ClockEstimatorResult: Sendable, Hashable, Codable {
    /// The estimator's name.
    public var name: String
    /// The absolute error after the scenario's settle time.
    public var error: Percentiles?
    /// The absolute error after the settle time with the scenario's invisible bias taken out:
    /// what the estimator could be judged on. Equal to `error` when there is no bias.
    public var visibleError: Percentiles?
    /// The earliest instant after which the error stayed within 1 ms to the end; nil if it never did.
    public var convergedAfter: Int64?
    /// The same, with the invisible bias taken out.
    public var visibleConvergedAfter: Int64?

    /// The tolerance that defines convergence: 1 ms.
    public static let convergenceTolerance: Int64 = 1_000_000

    /// Summarises a trace of errors taken at `times` (nanoseconds since the scenario began).
    public init(name: String, times: [Int64], errors: [Int64?], scenario: ClockScenario) {
        self.name = name
        let settled = zip(times, errors).filter { $0.0 >= scenario.settleTime }.map(\.1)
        // An estimator with nothing to say after settling has an unbounded error.
        func absolute(_ bias: Int64) -> [Double] {
            settled.map { $0.map { Double(abs($0 - bias)) } ?? .infinity }
        }
        error = Percentiles(absolute(0))
        visibleError = Percentiles(absolute(scenario.invisibleBias))
        convergedAfter = ClockEstimatorResult.convergence(times: times, errors: errors, bias: 0)
        visibleConvergedAfter = ClockEstimatorResult.convergence(times: times, errors: errors, bias: scenario.invisibleBias)
    }

    private static func convergence(times: [Int64], errors: [Int64?], bias: Int64) -> Int64? {
        var converged: Int64?
        for (time, error) in zip(times, errors).reversed() {
            guard let error, abs(error - bias) <= convergenceTolerance else { break }
            converged = time
        }
        return converged
    }
}
