import TandemClock
import TandemNet
import TandemHarness

/// The clock benchmark: every scenario, our estimator and the references on the same samples.
public struct ClockBenchmark: Sendable {
    /// The scenarios to run, in order.
    public var scenarios: [ClockScenario]

    /// Creates the benchmark over `scenarios` (by default the five standard ones).
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
            case let .simulated(impairment):
                results.append(ClockBenchmark.runSimulated(scenario, impairment: impairment))
            }
        }
        return ClockBenchmarkReport(scenarios: results)
    }

    /// Runs one simulated scenario on virtual time, once per seed, pooling the results; each run
    /// gets a fresh `lineup`.
    public static func runSimulated(_ scenario: ClockScenario, impairment: Impairment,
                                    lineup: () -> [any SessionTimeEstimator] = ClockErrorRecorder.standardLineup) -> ClockScenarioResult {
        var recorders: [ClockErrorRecorder] = []
        var sent = 0
        var lost = 0
        for run in 0..<max(scenario.runs, 1) {
            var simulation = ClockSyncSimulation(setup: ClockSyncSimulation.Setup(
                impairment: impairment,
                clientOffset: scenario.clientOffset, clientDriftPPM: scenario.clientDriftPPM,
                seed: scenario.seed &+ UInt64(run)
            ))
            var recorder = ClockErrorRecorder(estimators: lineup())
            simulation.run(until: scenario.duration, evaluationInterval: scenario.evaluationInterval) { event in
                switch event {
                case let .sample(sample, _, localTime):
                    recorder.learn(sample, now: localTime)
                case let .evaluation(sessionTime, localTime):
                    recorder.evaluate(elapsed: sessionTime, sessionTime: sessionTime, localTime: localTime)
                }
            }
            sent += simulation.policy.statistics.sent
            lost += simulation.policy.statistics.lost
            recorders.append(recorder)
        }
        return ClockScenarioResult(
            scenario: scenario, probesSent: sent, samples: recorders.reduce(0) { $0 + $1.sampleCount },
            probesLost: lost, estimators: ClockErrorRecorder.results(of: recorders, in: scenario)
        )
    }
}
