/// Every estimator's result in one scenario, with what the sample stream looked like.
public struct ClockScenarioResult: Sendable, Hashable, Codable {
    /// The scenario.
    public var scenario: ClockScenario
    /// Probes sent by the participant, over every run.
    public var probesSent: Int
    /// Replies that became samples (every estimator saw exactly these), over every run.
    public var samples: Int
    /// Probes counted lost, over every run.
    public var probesLost: Int
    /// Each estimator's result, ours first.
    public var estimators: [ClockEstimatorResult]

    /// Creates a result from its parts.
    public init(scenario: ClockScenario, probesSent: Int, samples: Int, probesLost: Int, estimators: [ClockEstimatorResult]) {
        self.scenario = scenario
        self.probesSent = probesSent
        self.samples = samples
        self.probesLost = probesLost
        self.estimators = estimators
    }

    /// The result of the estimator called `name`.
    public func estimator(_ name: String) -> ClockEstimatorResult? {
        estimators.first { $0.name == name }
    }
}
