import Foundation
import TandemBench

/// `tandem bench all`: the benchmark suite, each scenario by the baseline and by the coordinator,
/// with a report for machines, for people and for browsers.
enum BenchAllCommand: Command {
    static let words = ["bench", "all"]
    static let usage = "bench all [--out DIR] [--quick] [--scenario NAME[,NAME…]] [--clip PATH] [--keep-logs DIR] [--check] [--list]"
    static let summary = "the timing-accuracy suite: named scenarios, apply-on-receipt baseline beside the coordinator; "
        + "report.json, report.md, SVG plots and index.html in DIR (build with -c release); --keep-logs keeps what every peer wrote"

    static func run(_ arguments: [String]) async throws -> Int32 {
        let options = try Arguments(arguments, options: ["out", "scenario", "clip", "keep-logs"], flags: ["quick", "check", "list"])
        try options.expectPositionals(atMost: 0)
        let quick = options.flags.contains("quick")
        let catalogue = quick ? Scenario.quickCatalogue : Scenario.catalogue
        if options.flags.contains("list") {
            for scenario in catalogue { printOutput("\(scenario.name): \(scenario.summary) [\(scenario.network)]") }
            if !quick { printOutput("\(audioScenario): \(audioSummary) [PulseAudio null sink]") }
            return 0
        }
        var scenarios = catalogue
        // The sound scenario (`tandem bench audio`) runs in the full suite, after the others.
        var runsAudio = !quick
        if let names = options.value("scenario") {
            runsAudio = !quick && names.split(separator: ",").contains { $0 == audioScenario }
            scenarios = try names.split(separator: ",").filter { quick || $0 != audioScenario }.map { name throws(CLIError) in
                guard let scenario = catalogue.first(where: { $0.name == name }) else {
                    throw .usage("no scenario '\(name)' in the \(quick ? "quick" : "full") suite: "
                        + catalogue.map(\.name).joined(separator: ", "))
                }
                return scenario
            }
        }
        let clip = try suiteClip(options.value("clip"))
        let out = URL(fileURLWithPath: options.value("out") ?? "bench-report", isDirectory: true)
        var suite = BenchmarkSuite(scenarios: scenarios, quick: quick, clip: clip, executable: try BenchSyncCommand.executablePath())
        suite.logs = options.value("keep-logs")
        if runsAudio, scenarios.isEmpty {
            try runAudio(out: out)
            return 0
        }
        let report: SuiteReport
        do {
            report = try suite.run { printError("bench all: \($0)") }
        } catch {
            throw CLIError.failure("\(error)")
        }
        do {
            _ = try SuiteReportWriter.write(report, to: out)
        } catch {
            throw CLIError.failure("cannot write the report to \(out.path): \(error)")
        }
        printOutput(SuiteMarkdown.table(report))
        printOutput("report: \(out.appendingPathComponent("index.html").path)")
        if runsAudio { try runAudio(out: out) }
        guard options.flags.contains("check") else { return 0 }
        let violations = SuiteLimits().violations(report)
        for violation in violations { printError("bench all: limit: \(violation)") }
        return violations.isEmpty ? 0 : 1
    }

    /// The name of the sound scenario, which `tandem bench audio` runs.
    static let audioScenario = "audio"
    static let audioSummary = "Seven participants (three built-in players, two mpv, two applying changes on receipt) play into one "
        + "PulseAudio null sink, a channel each: play, pause, seek, rates and an item change; the audio spread at the sink."

    /// Runs the sound scenario; its report goes to `audio.json` and `audio.md` in `out`, its table
    /// to standard output. A run that fails is said in one line, and the suite's report stands.
    private static func runAudio(out: URL) throws {
        printError("bench all: audio")
        do {
            let report = try BenchAudioCommand.benchmark(executable: try BenchSyncCommand.executablePath()).run { printError("bench all:   \($0)") }
            try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try encoder.encode(report).write(to: out.appendingPathComponent("audio.json"))
            let table = AudioBenchmarkTable.render(report)
            try table.write(to: out.appendingPathComponent("audio.md"), atomically: true, encoding: .utf8)
            printOutput(table)
        } catch {
            printError("bench all: audio: \(error)")
        }
    }

    /// The clip to play: `--clip`, else the sample clip for watching together, else one made with ffmpeg.
    private static func suiteClip(_ path: String?) throws -> String {
        if let path {
            _ = try HostCommand.checkedMedia(path)
            return path
        }
        let sample = "Samples/Media/watch-together.mp4"
        if FileManager.default.fileExists(atPath: sample) { return sample }
        let made = FileManager.default.temporaryDirectory.appendingPathComponent("tandem-bench-all-clip.mp4").path
        if !FileManager.default.fileExists(atPath: made) {
            printError("bench all: making a 20 s 640x360 clip with ffmpeg")
            do {
                try BenchmarkClip().make(at: made)
            } catch {
                throw CLIError.failure("cannot make a clip: \(error)")
            }
        }
        return made
    }
}
