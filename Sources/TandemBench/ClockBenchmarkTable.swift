/// Renders a clock benchmark report as a plain-text table.
public enum ClockBenchmarkTable {
    /// The whole report: one block per scenario, then the targets.
    public static func render(_ report: ClockBenchmarkReport) -> String {
        var lines: [String] = []
        lines.append("clock offset error against the true session time (|estimate − truth|, after each scenario's settle time)")
        lines.append("")
        let header = [pad("estimator", 15), pad("p50", 10, right: true), pad("p90", 10, right: true),
                      pad("p99", 10, right: true), pad("max", 10, right: true), pad("within 1 ms after", 18, right: true)]
        // Convergence is the worst over the runs.
        for result in report.scenarios {
            let scenario = result.scenario
            lines.append("\(scenario.name): \(scenario.summary)")
            let runs = scenario.source == .loopback ? "1 run" : "\(scenario.runs) runs pooled"
            lines.append("  \(runs), settle \(duration(Double(scenario.settleTime))), \(result.probesSent) probes, \(result.samples) samples, \(result.probesLost) lost")
            lines.append("  " + header.joined(separator: " "))
            for estimator in result.estimators {
                let error = estimator.error
                lines.append("  " + [
                    pad(estimator.name, 15),
                    pad(duration(error?.p50), 10, right: true), pad(duration(error?.p90), 10, right: true),
                    pad(duration(error?.p99), 10, right: true), pad(duration(error?.max), 10, right: true),
                    pad(convergence(estimator.convergedAfter), 18, right: true),
                ].joined(separator: " "))
            }
            if scenario.invisibleBias != 0 {
                lines.append("  note: path asymmetry biases every estimator by asymmetry/2 = \(duration(Double(abs(scenario.invisibleBias)))),")
                lines.append("  which no exchange of timestamps can reveal. With that bias taken out:")
                for estimator in result.estimators {
                    let error = estimator.visibleError
                    lines.append("  " + [
                        pad(estimator.name, 15),
                        pad(duration(error?.p50), 10, right: true), pad(duration(error?.p90), 10, right: true),
                        pad(duration(error?.p99), 10, right: true), pad(duration(error?.max), 10, right: true),
                        pad(convergence(estimator.visibleConvergedAfter), 18, right: true),
                    ].joined(separator: " "))
                }
            }
            lines.append("")
        }
        lines.append("targets:")
        for target in report.targets {
            lines.append("  [\(target.met ? "met" : "MISSED")] \(target.requirement): \(target.measured)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A nanosecond quantity in the most readable unit.
    public static func duration(_ nanoseconds: Double?) -> String {
        guard let nanoseconds else { return "-" }
        guard nanoseconds.isFinite else { return "∞" }
        let magnitude = abs(nanoseconds)
        if magnitude < 1_000 { return "\(fixed(nanoseconds, 0)) ns" }
        if magnitude < 1_000_000 { return "\(fixed(nanoseconds / 1_000, 1)) µs" }
        if magnitude < 1_000_000_000 { return "\(fixed(nanoseconds / 1_000_000, 2)) ms" }
        return "\(fixed(nanoseconds / 1_000_000_000, 2)) s"
    }

    /// A convergence time, or "never".
    public static func convergence(_ nanoseconds: Int64?) -> String {
        nanoseconds.map { duration(Double($0)) } ?? "never"
    }

    private static func fixed(_ value: Double, _ decimals: Int) -> String {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        var text = decimals == 0 ? String(Int(rounded)) : String(rounded)
        if decimals > 0, let dot = text.firstIndex(of: ".") {
            let have = text.distance(from: dot, to: text.endIndex) - 1
            if have < decimals { text += String(repeating: "0", count: decimals - have) }
        }
        return text
    }

    private static func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        let padding = String(repeating: " ", count: max(width - text.count, 0))
        return right ? padding + text : text + padding
    }
}
