import Testing
import TandemBench

/// The results table and `report.md`, from the hand-built report.
@Suite struct SuiteMarkdownTests {
    /// The table's rows, each split into its cells.
    private func rows(_ markdown: String) -> [[String]] {
        markdown.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { $0.hasPrefix("| ") }
            .map { line in
                line.dropFirst(2).dropLast(2).components(separatedBy: " | ")
            }
    }

    @Test func tableHasTheHeaderThenTwoRowsPerScenarioBaselineFirst() {
        let markdown = SuiteMarkdown.table(ReportFixture.report)
        let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0] == "| scenario | peers | network | follows | spread p50 | p95 | p99 | max | clock error p99 | "
            + "command → effect p50 | convergence p50 | frames dropped / presented | CPU % per peer (mean) | memory MiB per peer (max) |")
        #expect(lines[1] == "|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        let table = rows(markdown)
        #expect(table.count == 1 + 2 * ReportFixture.report.scenarios.count)
        #expect(table.allSatisfy { $0.count == 14 })
        #expect(table.dropFirst().map { $0[0] } == ["steady", "steady", ReportFixture.oddName, ReportFixture.oddName])
        #expect(table.dropFirst().map { $0[3] } == ["apply on receipt", "tandem", "apply on receipt", "tandem"])
    }

    @Test func tableFormatsEachValueInItsColumn() {
        let table = rows(SuiteMarkdown.table(ReportFixture.report))
        #expect(table[1] == ["steady", "3", "loopback", "apply on receipt", "12.5", "25.0", "31.4", "40.0", "—", "45.6",
                             "120 (1/3 not converged)", "5 / 1200", "13.0", "45.7"])
        #expect(table[2] == ["steady", "3", "loopback", "tandem", "0.109", "0.120", "0.148", "0.200", "0.250", "250",
                             "1.234", "0 / 1210", "4.000", "31.3"])
        #expect(table[3] == [ReportFixture.oddName, "2", "50 ± 20 ms, 2 % loss", "apply on receipt", "—", "—", "—", "—", "—", "—",
                             "—", "40 / 800", "—", "—"])
        #expect(table[4] == [ReportFixture.oddName, "2", "50 ± 20 ms, 2 % loss", "tandem", "0.500", "0.900", "1.000", "1.500", "0.400",
                             "—", "2/2 not converged", "1 / 790", "150", "512"])
    }

    @Test func tableEndsWithTheRatioOfTheP99Spreads() {
        let lines = SuiteMarkdown.table(ReportFixture.report).split(separator: "\n").map(String.init)
        // 31.4 / 0.148 = 212.2
        #expect(lines.contains("steady: baseline p99 / tandem p99 = 212×"))
        #expect(lines.contains("\(ReportFixture.oddName): baseline p99 / tandem p99 = —"))
        #expect(lines.last == "\(ReportFixture.oddName): baseline p99 / tandem p99 = —")
    }

    @Test(arguments: [(0.109, "0.109"), (31.4, "31.4"), (250.0, "250"), (9.9994, "9.999"), (99.94, "99.9"), (0, "0.000"),
                      (-0.5, "-0.500"), (.nan, "—"), (.infinity, "—")])
    func numbersHaveDecimalsByMagnitude(value: Double, text: String) {
        #expect(SuiteTable.number(value) == text)
        #expect(SuiteTable.number(nil) == "—")
    }

    @Test func aMissingRunStillHasItsRowWithNoValues() {
        var scenario = ReportFixture.steady
        scenario.runs.removeFirst()
        let report = SuiteReport(date: "d", machine: "m", quick: false, seconds: 1, scenarios: [scenario])
        let table = rows(SuiteMarkdown.table(report))
        #expect(table.count == 3)
        #expect(table[1] == ["steady", "3", "loopback", "apply on receipt"] + Array(repeating: "—", count: 10))
        #expect(table[2][4] == "0.109")
        #expect(SuiteTable.ratio(scenario) == "steady: baseline p99 / tandem p99 = —")
    }

    @Test func smallRatiosKeepTheirDecimals() {
        var scenario = ReportFixture.steady
        scenario.runs[0].spread?.p99 = 0.37
        #expect(SuiteTable.ratio(scenario) == "steady: baseline p99 / tandem p99 = 2.5×")
        scenario.runs[0].spread?.p99 = 0.074
        #expect(SuiteTable.ratio(scenario) == "steady: baseline p99 / tandem p99 = 0.50×")
        scenario.runs[1].spread?.p99 = 0
        #expect(SuiteTable.ratio(scenario) == "steady: baseline p99 / tandem p99 = —")
    }

    @Test func aPipeInACellDoesNotSplitIt() {
        var scenario = ReportFixture.steady
        scenario.network = "wifi | 5 GHz"
        let report = SuiteReport(date: "d", machine: "m", quick: false, seconds: 1, scenarios: [scenario])
        let markdown = SuiteMarkdown.table(report)
        #expect(markdown.contains("| wifi \\| 5 GHz |"))
    }

    @Test func documentHasTheRunTheTableTheRatiosAndTheErrors() {
        let document = SuiteMarkdown.document(ReportFixture.report)
        #expect(document.hasPrefix("# Tandem benchmark suite\n"))
        #expect(document.contains("2025-06-01T12:00:00Z"))
        #expect(document.contains("Linux 6.1, 2 cores, 4 GiB"))
        #expect(document.contains("quick"))
        #expect(document.contains(SuiteMarkdown.table(ReportFixture.report)))
        #expect(document.contains("- \(ReportFixture.oddName), apply on receipt: peer p2 exited with status 1"))
        #expect(document.contains("(steady-spread.svg)"))

        let clean = SuiteReport(date: "d", machine: "m", quick: false, seconds: 1, scenarios: [ReportFixture.steady])
        #expect(SuiteMarkdown.document(clean).contains("- suite: full"))
        #expect(SuiteMarkdown.document(clean).contains("No run reported an error."))
    }
}
