import Foundation

/// The clock benchmark's findings: every scenario's results and the targets checked.
public struct ClockBenchmarkReport: Sendable, Hashable, Codable {
    /// Each scenario's results, in the order run.
    public var scenarios: [ClockScenarioResult]
    /// The targets, checked against `scenarios`.
    public var targets: [ClockTarget]

    /// Creates a report and checks the targets.
    public init(scenarios: [ClockScenarioResult]) {
        self.scenarios = scenarios
        self.targets = ClockTarget.check(scenarios)
    }

    /// The report as pretty-printed JSON; times are nanoseconds.
    public func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return try encoder.encode(self)
    }
}
