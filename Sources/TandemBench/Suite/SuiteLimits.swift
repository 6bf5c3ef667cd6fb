import Foundation

/// Loose limits that a suite's report must keep, for CI on a shared, noisy machine: not the
/// design's targets (those are for a quiet machine and are read off the report), but bounds
/// that only a real regression breaks.
public struct SuiteLimits: Sendable {
    /// The coordinator's inter-peer spread, p99, ms.
    public var coordinatorSpreadP99 = 10.0
    /// The fewest frame spreads a run must measure (builtin player).
    public var minimumFrames = 30

    /// The CI limits.
    public init() {}

    /// Every way `report` breaks the limits, one line each; empty when it keeps them.
    public func violations(_ report: SuiteReport) -> [String] {
        var problems: [String] = []
        for scenario in report.scenarios {
            for mode in SyncMode.allCases {
                guard let run = scenario.run(mode) else {
                    problems.append("\(scenario.name): no \(mode.title) run")
                    continue
                }
                let name = "\(scenario.name), \(mode.title)"
                problems += run.errors.map { "\(name): \($0)" }
                guard let spread = run.spread else {
                    problems.append("\(name): no spread measured")
                    continue
                }
                if scenario.player == "builtin" && spread.count < minimumFrames {
                    problems.append("\(name): only \(spread.count) frames compared (at least \(minimumFrames))")
                }
                if mode == .coordinator && spread.p99 > coordinatorSpreadP99 {
                    problems.append("\(name): spread p99 " + String(format: "%.3f ms is over %.3f ms", spread.p99, coordinatorSpreadP99))
                }
                if mode == .coordinator && run.clockError == nil {
                    problems.append("\(name): no clock error measured")
                }
            }
        }
        return problems
    }
}
