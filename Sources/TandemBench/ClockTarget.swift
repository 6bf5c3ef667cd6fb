/// One of the clock's targets, as the benchmark measured it.
public struct ClockTarget: Sendable, Hashable, Codable {
    /// What the target demands.
    public var requirement: String
    /// What was measured.
    public var measured: String
    /// Whether the measurement meets it.
    public var met: Bool

    /// The name of our estimator in the results.
    public static let ours = "tandem"
    /// The names of the reference estimators in the results.
    public static let references = ["latest", "ntp-min-of-8", "median-of-200"]

    /// Checks every target that `results` has the scenarios for.
    public static func check(_ results: [ClockScenarioResult]) -> [ClockTarget] {
        var targets: [ClockTarget] = []
        func ours(_ scenario: String) -> ClockEstimatorResult? {
            results.first { $0.scenario.name == scenario }?.estimator(Self.ours)
        }
        if let loopback = ours("loopback") {
            let p99 = loopback.error?.p99 ?? .infinity
            targets.append(ClockTarget(requirement: "loopback: error p99 ≤ 50 µs after 2 s",
                                       measured: "p99 \(ClockBenchmarkTable.duration(p99))", met: p99 <= 50_000))
            let converged = loopback.convergedAfter
            targets.append(ClockTarget(requirement: "loopback: within 1 ms in under 1 s",
                                       measured: "after \(ClockBenchmarkTable.convergence(converged))",
                                       met: converged.map { $0 < 1_000_000_000 } ?? false))
        }
        if let jitter = ours("jitter") {
            let p99 = jitter.error?.p99 ?? .infinity
            targets.append(ClockTarget(requirement: "jitter 40 ± 15 ms: error p99 ≤ 1 ms after 10 s",
                                       measured: "p99 \(ClockBenchmarkTable.duration(p99))", met: p99 <= 1_000_000))
        }
        if let drift = ours("drift") {
            let maximum = drift.error?.max ?? .infinity
            targets.append(ClockTarget(requirement: "drift 200 ppm: error ≤ 1 ms throughout 10 minutes (after 10 s)",
                                       measured: "max \(ClockBenchmarkTable.duration(maximum)), p99 \(ClockBenchmarkTable.duration(drift.error?.p99 ?? .infinity))",
                                       met: maximum <= 1_000_000))
        }
        for result in results {
            guard let mine = result.estimator(Self.ours)?.visibleError?.p99 else { continue }
            let theirs = Self.references.compactMap { result.estimator($0)?.visibleError?.p99 }
            let best = theirs.min() ?? .infinity
            let biasNote = result.scenario.invisibleBias != 0 ? " (net of the invisible asymmetry/2)" : ""
            targets.append(ClockTarget(
                requirement: "\(result.scenario.name): p99 below every reference's\(biasNote)",
                measured: "\(ClockBenchmarkTable.duration(mine)) vs best reference \(ClockBenchmarkTable.duration(best))",
                met: mine < best
            ))
        }
        return targets
    }
}
