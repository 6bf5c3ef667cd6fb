import Foundation

/// The suite's results as cells of text: one row per scenario and mode, the baseline's first,
/// then tandem's, and under the table one line per scenario comparing their p99 spreads. The
/// Markdown and the HTML report show the same cells.
public struct SuiteTable: Sendable, Equatable {
    /// The column titles.
    public static let header = [
        "scenario", "peers", "network", "follows", "spread p50", "p95", "p99", "max", "clock error p99",
        "command → effect p50", "convergence p50", "frames dropped / presented", "CPU % per peer (mean)",
        "memory MiB per peer (max)",
    ]
    /// Whether each column holds numbers, which read best aligned to the right.
    public static let numeric = [false, true, false, false, true, true, true, true, true, true, true, true, true, true]
    /// What a cell shows when there is no value.
    public static let missing = "—"

    /// The rows, each with one cell per column of `header`.
    public var rows: [[String]]
    /// One line per scenario: `steady: baseline p99 / tandem p99 = 212×`.
    public var ratios: [String]
    /// One line per scenario and mode whose players stalled on their own: how many stalls, how
    /// soon the group waited, and the spread once it resumed.
    public var stallLines: [String]
    /// One line per scenario and mode with a raw client's proposals: how many, how fast, and when
    /// the late joiner after them was on time.
    public var proposalLines: [String]
    /// One line per scenario and mode with a queue: the items advanced to, and the spread over
    /// the first frames of each.
    public var queueLines: [String]

    /// The table of `report`. A scenario missing a mode's run still has its row, with no values.
    public init(_ report: SuiteReport) {
        rows = report.scenarios.flatMap { scenario in
            [SyncMode.onReceipt, .coordinator].map { SuiteTable.row(scenario, $0) }
        }
        ratios = report.scenarios.map(SuiteTable.ratio)
        stallLines = report.scenarios.flatMap { scenario in
            [SyncMode.onReceipt, .coordinator].compactMap { mode in scenario.run(mode).flatMap { SuiteTable.stallLine(scenario, $0) } }
        }
        proposalLines = report.scenarios.flatMap { scenario in
            [SyncMode.onReceipt, .coordinator].compactMap { mode in scenario.run(mode).flatMap { SuiteTable.proposalLine(scenario, $0) } }
        }

        queueLines = report.scenarios.flatMap { scenario in
            [SyncMode.onReceipt, .coordinator].compactMap { mode in scenario.run(mode).flatMap { SuiteTable.queueLine(scenario, $0) } }
        }
    }

    /// `queue, tandem: 5 items advanced to; spread over the first 50 frames of each p99 0.300, max
    /// 0.500 ms (250 frames)`; nil without a queue.
    public static func queueLine(_ scenario: ScenarioResult, _ run: ModeResult) -> String? {
        guard let transitions = run.transitions else { return nil }
        var line = "\(scenario.name), \(run.mode.title): \(transitions) item\(transitions == 1 ? "" : "s") advanced to"
        if let spread = run.transitionSpread {
            line += "; spread over the first \(QueueAnalysis.firstFrames) frames of each p99 \(number(spread.p99)), max \(number(spread.max)) ms "
                + "(\(spread.count) frames)"
        }
        return line
    }

    /// `long-session, tandem: a raw client made 100000 proposals in 10.2 s; the late joiner was on
    /// time 412 ms after its process start`; nil without a raw client.
    public static func proposalLine(_ scenario: ScenarioResult, _ run: ModeResult) -> String? {
        guard let count = run.rawProposals else { return nil }
        var line = "\(scenario.name), \(run.mode.title): a raw client made \(count) proposals in \(number(run.rawProposalSeconds)) s; "
        if let onTime = run.convergence?.max, run.notConverged == 0 {
            line += "the late joiner was on time \(number(onTime)) ms after its process start"
        } else {
            line += "the late joiner was never on time"
        }
        return line
    }

    /// `stall-auto, tandem: 3 stalls, the group waited for 3; stall → waiting p50 12.0, max 31.0 ms;
    /// spread after resuming p99 0.210, max 0.400 ms (180 frames)`; nil when no player stalled.
    public static func stallLine(_ scenario: ScenarioResult, _ run: ModeResult) -> String? {
        guard let stalls = run.stalls, stalls > 0 else { return nil }
        let waited = stalls - (run.unansweredStalls ?? 0)
        var line = "\(scenario.name), \(run.mode.title): \(stalls) stall\(stalls == 1 ? "" : "s"), the group waited for "
            + (waited == 0 ? "none" : "\(waited)")
        if let delay = run.stallToWait {
            line += "; stall → waiting p50 \(number(delay.p50)), max \(number(delay.max)) ms"
        }
        if let spread = run.resumedSpread {
            line += "; spread after resuming p99 \(number(spread.p99)), max \(number(spread.max)) ms (\(spread.count) frames)"
        }
        return line
    }

    /// `value` as the table writes it: three decimals below 10, one below 100, none from there
    /// on (`0.109`, `31.4`, `250`); `—` for no value.
    public static func number(_ value: Double?) -> String {
        guard let value, value.isFinite else { return missing }
        let decimals = abs(value) < 10 ? 3 : abs(value) < 100 ? 1 : 0
        return String(format: "%.\(decimals)f", value)
    }

    /// The line comparing the p99 spread of `scenario`'s baseline with tandem's, `—` for a ratio
    /// when either is missing or tandem's is zero.
    public static func ratio(_ scenario: ScenarioResult) -> String {
        let line = "\(scenario.name): baseline p99 / tandem p99 = "
        guard let baseline = scenario.run(.onReceipt)?.spread?.p99, let tandem = scenario.run(.coordinator)?.spread?.p99,
              baseline.isFinite, tandem.isFinite, tandem > 0 else { return line + missing }
        let ratio = baseline / tandem
        let decimals = ratio >= 10 ? 0 : ratio >= 1 ? 1 : 2
        return line + String(format: "%.\(decimals)f", ratio) + "×"
    }

    private static func row(_ scenario: ScenarioResult, _ mode: SyncMode) -> [String] {
        let identity = [scenario.name, String(scenario.peers), scenario.network, mode.title]
        guard let run = scenario.run(mode) else {
            return identity + Array(repeating: missing, count: header.count - identity.count)
        }
        let cpu = run.peers.compactMap(\.cpuPercent).filter(\.isFinite)
        let memory = run.peers.compactMap(\.peakMemoryMiB).filter(\.isFinite)
        return identity + [
            number(run.spread?.p50), number(run.spread?.p95), number(run.spread?.p99), number(run.spread?.max),
            number(run.clockError?.p99),
            number(run.commandToEffect?.p50),
            convergence(run),
            "\(run.framesDropped) / \(run.framesPresented)",
            number(cpu.isEmpty ? nil : cpu.reduce(0, +) / Double(cpu.count)),
            number(memory.max()),
        ]
    }

    /// The median convergence, and how many of the joins and seeks never converged when some did not.
    private static func convergence(_ run: ModeResult) -> String {
        guard run.convergenceEvents > 0 else { return missing }
        guard run.notConverged > 0 else { return number(run.convergence?.p50) }
        let failures = "\(run.notConverged)/\(run.convergenceEvents) not converged"
        guard let median = run.convergence?.p50 else { return failures }
        return "\(number(median)) (\(failures))"
    }
}
