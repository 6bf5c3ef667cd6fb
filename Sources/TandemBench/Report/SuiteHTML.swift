/// The suite's report as one self-contained HTML page (`index.html`): inline style, no scripts,
/// nothing fetched from elsewhere; it shows the charts written beside it.
public enum SuiteHTML {
    /// The page: when and where the suite ran, the table and the ratios, then each scenario with
    /// its summary, its peers, its network, its three charts and any errors.
    public static func page(_ report: SuiteReport) -> String {
        let table = SuiteTable(report)
        var out = """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <title>Tandem benchmark suite, \(report.date.markupEscaped)</title>
        <style>
        body { font-family: Helvetica, Arial, sans-serif; margin: 2em auto; max-width: 1200px; padding: 0 1em; color: #222; }
        table { border-collapse: collapse; font-size: 13px; }
        th, td { border: 1px solid #ccc; padding: 4px 8px; }
        th { background: #f2f2f2; }
        td.number { text-align: right; font-variant-numeric: tabular-nums; }
        tr.coordinator td { background: #f4f8fc; }
        .meta { color: #555; }
        figure { margin: 1em 0; }
        figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
        .errors { color: #a00; }
        </style>
        </head>
        <body>
        <h1>Tandem benchmark suite</h1>

        """
        out += "<p class=\"meta\">\(report.date.markupEscaped) · \(report.machine.markupEscaped) · "
            + "\(report.quick ? "quick suite (--quick)" : "full suite") · \(SuiteTable.number(report.seconds).markupEscaped) s</p>\n"
        out += "<p>Every scenario ran twice: with the baseline (“\(SyncMode.onReceipt.title.markupEscaped)”: each peer acts on a change "
            + "when it arrives, no clock synchronisation) and with tandem’s coordinator (“\(SyncMode.coordinator.title.markupEscaped)”). "
            + "Spreads, clock errors and times are milliseconds.</p>\n"
        out += "<table>\n<thead><tr>" + SuiteTable.header.map { "<th>\($0.markupEscaped)</th>" }.joined() + "</tr></thead>\n<tbody>\n"
        for (index, row) in table.rows.enumerated() {
            // Rows come in pairs, the baseline's then tandem's.
            let mode = index % 2 == 0 ? SyncMode.onReceipt : .coordinator
            out += "<tr class=\"\(mode == .coordinator ? "coordinator" : "baseline")\">"
            out += zip(row, SuiteTable.numeric).map { cell, numeric in
                "<td\(numeric ? " class=\"number\"" : "")>\(cell.markupEscaped)</td>"
            }.joined()
            out += "</tr>\n"
        }
        out += "</tbody>\n</table>\n<ul>\n" + (table.ratios + table.stallLines + table.proposalLines + table.queueLines + SuiteTable.partyLines(report)).map { "<li>\($0.markupEscaped)</li>\n" }.joined() + "</ul>\n"
        for (scenario, stem) in zip(report.scenarios, SuiteReportWriter.fileStems(report)) {
            out += section(scenario, stem: stem)
        }
        out += "</body>\n</html>\n"
        return out
    }

    private static func section(_ scenario: ScenarioResult, stem: String) -> String {
        var out = "<section id=\"\(stem.markupEscaped)\">\n<h2>\(scenario.name.markupEscaped)</h2>\n"
        out += "<p>\(scenario.summary.markupEscaped)</p>\n"
        out += "<p class=\"meta\">\(scenario.peers) peers · player \(scenario.player.markupEscaped) · network: \(scenario.network.markupEscaped)</p>\n"
        for chart in ScenarioChart.allCases {
            let file = chart.fileName(stem: stem).markupEscaped
            out += "<figure><img src=\"\(file)\" alt=\"\((scenario.name + ": " + chart.subject).markupEscaped)\" width=\"800\" height=\"360\">"
                + "<figcaption>\(chart.subject.markupEscaped)</figcaption></figure>\n"
        }
        let errors = scenario.runs.flatMap { run in run.errors.map { "\(run.mode.title): \($0)" } }
        if !errors.isEmpty {
            out += "<ul class=\"errors\">\n" + errors.map { "<li>\($0.markupEscaped)</li>\n" }.joined() + "</ul>\n"
        }
        return out + "</section>\n"
    }
}
