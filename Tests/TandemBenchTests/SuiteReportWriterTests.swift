import Foundation
import Testing
import TandemBench

/// Every file of `tandem bench all --out DIR`, written from the hand-built report.
@Suite struct SuiteReportWriterTests {
    /// A fresh directory under the temporary one, not yet created.
    private func scratch() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("tandem-report-\(UUID().uuidString)")
            .appendingPathComponent("out")
    }

    private func remove(_ directory: URL) {
        try? FileManager.default.removeItem(at: directory.deletingLastPathComponent())
    }

    @Test func everyFileIsWrittenIntoANewDirectory() throws {
        let directory = scratch()
        defer { remove(directory) }
        let written = try SuiteReportWriter.write(ReportFixture.report, to: directory)
        let oddStem = "late-join------x-"
        #expect(SuiteReportWriter.fileStems(ReportFixture.report) == ["steady", oddStem])
        let expected = ["report.json", "report.md"]
            + ["steady", oddStem].flatMap { stem in ["spread", "clock", "distribution"].map { "\(stem)-\($0).svg" } }
            + ["index.html"]
        #expect(written.map(\.lastPathComponent) == expected)
        for file in written {
            #expect(file.deletingLastPathComponent().standardizedFileURL.path == directory.standardizedFileURL.path)
            let size = try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int
            #expect((size ?? 0) > 100, "\(file.lastPathComponent) is empty")
        }
        let listed = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(listed == expected.sorted())
    }

    @Test func reportJSONDecodesBackToTheReport() throws {
        let directory = scratch()
        defer { remove(directory) }
        _ = try SuiteReportWriter.write(ReportFixture.report, to: directory)
        let data = try Data(contentsOf: directory.appendingPathComponent("report.json"))
        #expect(try JSONDecoder().decode(SuiteReport.self, from: data) == ReportFixture.report)
        let text = String(decoding: data, as: UTF8.self)
        // Pretty-printed with sorted keys.
        #expect(text.contains("\n  \"date\" : \"2025-06-01T12:00:00Z\",\n  \"machine\""))
    }

    @Test func aNonFiniteNumberDoesNotLoseTheReport() throws {
        let directory = scratch()
        defer { remove(directory) }
        var scenario = ReportFixture.steady
        scenario.runs[1].spreadSeries.append(SeriesPoint(t: 31, value: .nan))
        scenario.runs[1].peers[0].cpuPercent = .infinity
        let report = SuiteReport(date: "d", machine: "m", quick: false, seconds: 1, scenarios: [scenario])
        let written = try SuiteReportWriter.write(report, to: directory)
        #expect(written.count == 6)
        let json = try String(contentsOf: directory.appendingPathComponent("report.json"), encoding: .utf8)
        #expect(json.contains("\"nan\""))
        #expect(json.contains("\"inf\""))
    }

    @Test func everySVGIsWellFormed() throws {
        let directory = scratch()
        defer { remove(directory) }
        let charts = try SuiteReportWriter.write(ReportFixture.report, to: directory).filter { $0.pathExtension == "svg" }
        #expect(charts.count == 6)
        for chart in charts {
            let document = SVGDocument(try String(contentsOf: chart, encoding: .utf8))
            #expect(document.error == nil, "\(chart.lastPathComponent): \(String(describing: document.error))")
            #expect(document.root == "svg")
        }
        // The odd scenario's baseline measured nothing and its one peer's clock series is empty.
        let clock = SVGDocument(try String(contentsOf: directory.appendingPathComponent("late-join------x--clock.svg"), encoding: .utf8))
        #expect(clock.texts.contains("no data"))
        #expect(clock.titles.first == "\(ReportFixture.oddName): clock error per peer over time (tandem)")
        // Its baseline measured no spread: the legend says so rather than leaving it out.
        let spread = SVGDocument(try String(contentsOf: directory.appendingPathComponent("late-join------x--spread.svg"), encoding: .utf8))
        #expect(spread.texts.contains("apply on receipt (no data)"))
        #expect(spread.texts.contains("tandem (p99 1.000 ms)"))
        #expect(spread.polylines.count == 1)
    }

    @Test func indexShowsEverySVGWrittenAndEscapesText() throws {
        let directory = scratch()
        defer { remove(directory) }
        let written = try SuiteReportWriter.write(ReportFixture.report, to: directory)
        let html = try String(contentsOf: directory.appendingPathComponent("index.html"), encoding: .utf8)
        for chart in written where chart.pathExtension == "svg" {
            #expect(html.contains("<img src=\"\(chart.lastPathComponent)\""), "index.html does not show \(chart.lastPathComponent)")
        }
        #expect(html.contains("Spikes &lt;&amp;&gt; and &quot;quotes&quot; while a peer joins late."))
        #expect(!html.contains(ReportFixture.oddSummary))
        #expect(html.contains("<h2>late join/ü &amp; &lt;x&gt;</h2>"))
        #expect(!html.contains("<x>"))
        // Self-contained: no scripts, nothing fetched.
        #expect(!html.contains("<script"))
        #expect(!html.contains("://"))
        #expect(html.contains("<style>"))
        // The same table as the Markdown: a header and two rows per scenario.
        #expect(html.components(separatedBy: "<tr").count - 1 == 1 + 2 * ReportFixture.report.scenarios.count)
        #expect(html.contains("<td class=\"number\">120 (1/3 not converged)</td>"))
        #expect(html.contains("<li>steady: baseline p99 / tandem p99 = 212×</li>"))
        #expect(html.contains("peer p2 exited with status 1"))
        #expect(html.contains("2025-06-01T12:00:00Z"))
        #expect(html.contains("Linux 6.1, 2 cores, 4 GiB"))
    }

    @Test func namesThatSanitiseAlikeGetTheirOwnFiles() throws {
        var first = ReportFixture.steady
        first.name = "a b"
        var second = ReportFixture.steady
        second.name = "a-b"
        var third = ReportFixture.steady
        third.name = ""
        let report = SuiteReport(date: "d", machine: "m", quick: false, seconds: 1, scenarios: [first, second, third])
        #expect(SuiteReportWriter.fileStems(report) == ["a-b", "a-b-2", "scenario"])
        #expect(SuiteReportWriter.fileStem("../x/é.y_z") == "---x---y_z")
    }

    @Test func aDirectoryThatCannotBeMadeIsAClearError() throws {
        let directory = scratch()
        defer { remove(directory) }
        // A file where the directory should be.
        try FileManager.default.createDirectory(at: directory.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("not a directory".utf8).write(to: directory)
        let error = try #require(throws: SuiteReportError.self) {
            try SuiteReportWriter.write(ReportFixture.report, to: directory)
        }
        #expect(error.path == directory.path)
        #expect(error.description.hasPrefix("cannot create the report directory \(directory.path)"))
    }
}
