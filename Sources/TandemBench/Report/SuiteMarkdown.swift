/// The suite's report as GitHub Markdown: the table on its own, or the whole `report.md`.
public enum SuiteMarkdown {
    /// The results table, one row per scenario and mode (the baseline first), then one line per
    /// scenario with the ratio of the baseline's p99 spread to tandem's.
    public static func table(_ report: SuiteReport) -> String {
        let table = SuiteTable(report)
        var lines: [String] = []
        lines.append(row(SuiteTable.header))
        lines.append("|" + SuiteTable.numeric.map { $0 ? "---:" : "---" }.joined(separator: "|") + "|")
        lines += table.rows.map(row)
        // Each ratio its own paragraph, so it renders as a line of its own.
        for ratio in table.ratios + table.stallLines + table.proposalLines + table.queueLines + SuiteTable.partyLines(report) {
            lines.append("")
            lines.append(ratio)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The whole `report.md`: when and where the suite ran, the table and the ratios, each
    /// scenario with its charts, and the errors any run reported.
    public static func document(_ report: SuiteReport) -> String {
        var lines: [String] = []
        lines.append("# Tandem benchmark suite")
        lines.append("")
        lines.append("- date: \(report.date)")
        lines.append("- machine: \(report.machine)")
        lines.append("- suite: \(report.quick ? "quick (`--quick`)" : "full"), \(SuiteTable.number(report.seconds)) s")
        lines.append("")
        lines.append("Every scenario ran twice: with the baseline (\"\(SyncMode.onReceipt.title)\": each peer acts on a change "
            + "when it arrives, no clock synchronisation) and with tandem's coordinator (\"\(SyncMode.coordinator.title)\"). "
            + "Spreads, clock errors and times are milliseconds.")
        lines.append("")
        lines.append(table(report))
        lines.append("## Scenarios")
        let stems = SuiteReportWriter.fileStems(report)
        for (scenario, stem) in zip(report.scenarios, stems) {
            lines.append("")
            lines.append("### \(scenario.name)")
            lines.append("")
            lines.append(scenario.summary)
            lines.append("")
            lines.append("\(scenario.peers) peers, player \(scenario.player), network: \(scenario.network).")
            for chart in ScenarioChart.allCases {
                lines.append("")
                lines.append("![\(stem): \(chart.subject)](\(chart.fileName(stem: stem)))")
            }
        }
        lines.append("")
        lines.append("## Errors")
        lines.append("")
        let errors = report.scenarios.flatMap { scenario in
            scenario.runs.flatMap { run in run.errors.map { "- \(scenario.name), \(run.mode.title): \($0)" } }
        }
        lines += errors.isEmpty ? ["No run reported an error."] : errors
        return lines.joined(separator: "\n") + "\n"
    }

    private static func row(_ cells: [String]) -> String {
        "| " + cells.map(cell).joined(separator: " | ") + " |"
    }

    /// A cell's text that cannot end the cell or the row early.
    private static func cell(_ text: String) -> String {
        text.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\r", with: " ").replacingOccurrences(of: "\n", with: " ")
    }
}
