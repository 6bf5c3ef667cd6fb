import TandemClock
import TandemTestKit

/// The clock benchmark: every scenario, our estimator and the references on the same samples.
public struct ClockBenchmark: Sendable {
    /// The scenarios to run, in order.
    public var scenarios: [ClockScenario]

    /// Creates the benchmark over `scenarios` (by default the five of issue 3).
    public init(scenarios: [ClockScenario] = ClockScenario.standard) {
        self.scenarios = scenarios
    }

    /// Runs every scenario and returns the report; `progress` hears each scenario's name as it
    /// starts. Loopback scenarios take their duration in real time, simulated ones a moment.
    public func run(progress: (String) -> Void = { _ in }) throws -> ClockBenchmarkReport {
        var results: [ClockScenarioResult] = []
        for scenario in scenarios {
            progress(scenario.name)
            switch scenario.source {
            case .loopback:
                results.append(try ClockLoopbackRun(scenario: scenario).run())
            case let .simulated(upstream, downstream):
                results.append(ClockBenchmark.runSimulated(scenario, upstream: upstream, downstream: downstream))
            }
        }
        return ClockBenchmarkReport(scenarios: results)
    }

    /// Runs one simulated scenario on virtual time.
    public static func runSimulated(_ scenario: ClockScenario, upstream: LinkProfile, downstream: LinkProfile,
                                    estimators: [any SessionTimeEstimator] = ClockErrorRecorder.standardLineup()) -> ClockScenarioResult {
        var simulation = ClockSyncSimulation(setup: ClockSyncSimulation.Setup(
            upstream: upstream, downstream: downstream,
            clientOffset: scenario.clientOffset, clientDriftPPM: scenario.clientDriftPPM, seed: scenario.seed
        ))
        var recorder = ClockErrorRecorder(estimators: estimators)
        simulation.run(until: scenario.duration, evaluationInterval: scenario.evaluationInterval) { event in
            switch event {
            case let .sample(sample, _, localTime):
                recorder.learn(sample, now: localTime)
            case let .evaluation(sessionTime, localTime):
                recorder.evaluate(elapsed: sessionTime, sessionTime: sessionTime, localTime: localTime)
            }
        }
        let polling = simulation.policy.statistics
        return ClockScenarioResult(
            scenario: scenario, probesSent: polling.sent, samples: recorder.sampleCount,
            probesLost: polling.lost, estimators: recorder.results(for: scenario)
        )
    }
}
