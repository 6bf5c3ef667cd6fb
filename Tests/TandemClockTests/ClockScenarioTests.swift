import Testing
import TandemBench
import TandemClock

/// The benchmark's simulated scenarios, run on virtual time with fewer seeds, with error bounds
/// that a broken estimator would miss. Deterministic: the same seeds give the same numbers.
@Suite struct ClockScenarioTests {
    static func run(_ scenario: ClockScenario, runs: Int) -> ClockScenarioResult {
        var scenario = scenario
        scenario.runs = runs
        guard case let .simulated(impairment) = scenario.source else { fatalError("not simulated") }
        // Our clock and the two references that can compete; the benchmark runs the full lineup.
        return ClockBenchmark.runSimulated(scenario, impairment: impairment) {
            [SessionClock(), MinimumDelayFilterEstimator(), MedianOffsetEstimator()]
        }
    }

    @Test func jitterStaysWithinAMillisecondAfterTenSeconds() throws {
        let result = Self.run(.jitter, runs: 1)
        let ours = try #require(result.estimator("tandem")?.error)
        #expect(ours.p99 <= 1_000_000)
        let median = try #require(result.estimator("median-of-200")?.error)
        let filter = try #require(result.estimator("ntp-min-of-8")?.error)
        #expect(ours.p99 < median.p99)
        #expect(ours.p99 < filter.p99)
    }

    @Test func asymmetryLeavesOnlyItsInvisibleHalf() throws {
        let result = Self.run(.asymmetry, runs: 2)
        let ours = try #require(result.estimator("tandem"))
        // Every estimator is off by asymmetry/2; ours by little more.
        #expect(abs(try #require(ours.error).p50 - 10_000_000) < 100_000)
        #expect(try #require(ours.visibleError).p99 <= 200_000)
    }

    @Test func lossAndDuplicatesDoNotDerailTheEstimate() throws {
        let result = Self.run(.loss, runs: 1)
        #expect(result.probesLost > result.probesSent / 5)
        let ours = try #require(result.estimator("tandem")?.error)
        #expect(ours.p99 <= 1_000_000)
        #expect(ours.p50 <= 200_000)
    }

    @Test func driftOfTwoHundredPPMIsTrackedForTenMinutes() throws {
        let result = Self.run(.drift, runs: 1)
        let ours = try #require(result.estimator("tandem"))
        #expect(try #require(ours.error).max <= 1_000_000)
        #expect(try #require(ours.convergedAfter) < 10_000_000_000)
        // Without a drift model the median of 200 samples lags by tens of milliseconds.
        #expect(try #require(result.estimator("median-of-200")?.error).p50 > 10_000_000)
    }

    @Test func runsRepeatExactly() {
        var scenario = ClockScenario.loss
        scenario.duration = 20_000_000_000
        let first = Self.run(scenario, runs: 1)
        let second = Self.run(scenario, runs: 1)
        #expect(first == second)
    }
}
