import Foundation

/// Writes what `tandem bench all --out DIR` leaves behind: `report.json`, `report.md`, three
/// charts per scenario (`NAME-spread.svg`, `NAME-clock.svg`, `NAME-distribution.svg`) and an
/// `index.html` that shows them all.
public enum SuiteReportWriter {
    /// Writes every file of `report` into `directory`, creating it if needed, and returns the
    /// files written: the JSON, the Markdown, each scenario's charts, then the page.
    ///
    /// The JSON is the report itself, pretty-printed with sorted keys; a non-finite number, which
    /// JSON cannot hold, is written as the string `"nan"`, `"inf"` or `"-inf"`.
    /// Throws `SuiteReportError` naming the file that could not be written.
    public static func write(_ report: SuiteReport, to directory: URL) throws -> [URL] {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw SuiteReportError.cannotCreateDirectory(directory.path, reason: reason(error))
        }
        var written: [URL] = []
        func save(_ data: Data, _ name: String) throws {
            let file = directory.appendingPathComponent(name)
            do {
                try data.write(to: file, options: .atomic)
            } catch {
                throw SuiteReportError.cannotWrite(file.path, reason: reason(error))
            }
            written.append(file)
        }

        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        let json: Data
        do {
            json = try encoder.encode(report)
        } catch {
            throw SuiteReportError.cannotEncode(directory.appendingPathComponent("report.json").path, reason: reason(error))
        }
        try save(json, "report.json")
        try save(Data(SuiteMarkdown.document(report).utf8), "report.md")
        for (scenario, stem) in zip(report.scenarios, fileStems(report)) {
            for chart in ScenarioChart.allCases {
                try save(Data(chart.chart(of: scenario).svg().utf8), chart.fileName(stem: stem))
            }
        }
        try save(Data(SuiteHTML.page(report).utf8), "index.html")
        return written
    }

    /// Each scenario's file stem, in order: its name made safe (see `fileStem(_:)`), with `-2`,
    /// `-3`, … after a stem an earlier scenario already has, so no chart overwrites another.
    public static func fileStems(_ report: SuiteReport) -> [String] {
        var taken: Set<String> = []
        return report.scenarios.map { scenario in
            let base = fileStem(scenario.name)
            var stem = base
            var suffix = 2
            while taken.contains(stem) {
                stem = "\(base)-\(suffix)"
                suffix += 1
            }
            taken.insert(stem)
            return stem
        }
    }

    /// `name` fit for a file name: every character other than an ASCII letter, a digit, `_` or
    /// `-` becomes `-`; `scenario` when the name is empty.
    public static func fileStem(_ name: String) -> String {
        guard !name.isEmpty else { return "scenario" }
        return String(name.map { character in
            character.isASCII && (character.isLetter || character.isNumber || character == "_" || character == "-") ? character : "-"
        })
    }

    private static func reason(_ error: Error) -> String {
        (error as? LocalizedError)?.errorDescription ?? String(describing: error)
    }
}
