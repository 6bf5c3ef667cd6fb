import Foundation
import TandemBench

/// `tandem bench audio`: participants' sound measured at the output, on a PulseAudio server of
/// the bench's own: the spread of the built-in players, of mpv players and of the
/// apply-on-receipt baseline, and each built-in output's own error.
enum BenchAudioCommand: Command {
    static let words = ["bench", "audio"]
    static let usage = "bench audio [--steady SECONDS] [--relay-drift-ppm PPM] [--groups LIST] [--mpv-args ARGS] [--executable PATH] [--keep-logs DIR] [--json] [--out FILE]"
    static let summary = "participants' sound recorded from one PulseAudio null sink (a channel each): audio spread of built-in, "
        + "mpv and on-receipt players, each output's own error, corrections, snaps, underruns (build with -c release)"

    static let options = [
        OptionHelp("--steady SECONDS", "seconds of steady play added after the first play (default 20, at most 1800: a 30-minute run)"),
        OptionHelp("--relay-drift-ppm PPM", "how fast the relay's session clock gains on the machine's (default 100)"),
        OptionHelp("--groups LIST", "which groups take part, comma-separated: tandem (always, its first player hosts), mpv, "
            + "on-receipt (default all three)"),
        OptionHelp("--mpv-args ARGS", "more options for the mpv participants, after the bench's own (--vo=null --ao=pulse and the device)"),
        OptionHelp("--executable PATH", "another tandem build to run as the participants and the relay (default this one)"),
        OptionHelp("--keep-logs DIR", "keep the media, the recording, every audio log and report.json in DIR"),
        OptionHelp("--json", "print the report as JSON"),
        OptionHelp("--out FILE", "also write the report as JSON to FILE"),
    ]

    static func run(_ arguments: [String]) async throws -> Int32 {
        let options = try Arguments(arguments, options: ["steady", "relay-drift-ppm", "groups", "mpv-args", "executable", "keep-logs", "out"], flags: ["json"])
        try options.expectPositionals(atMost: 0)
        // Another build as the participants and the relay (`--executable`): to compare builds in one sitting.
        let executable = try options.value("executable") ?? BenchSyncCommand.executablePath()
        guard FileManager.default.isExecutableFile(atPath: executable) else { throw CLIError.usage("--executable: no executable at \(executable)") }
        var benchmark = BenchAudioCommand.benchmark(executable: executable)
        benchmark.steadySeconds = try options.double("steady", default: 20)!
        // The analysis holds the whole recording in memory (a channel a participant, 32-bit samples,
        // and a copy of a group's channels while it is read): 30 minutes of the three built-in
        // players alone is about 2 GB, of all seven about 5 GB.
        guard (0...1_800).contains(benchmark.steadySeconds) else { throw CLIError.usage("--steady wants seconds within 0…1800") }
        benchmark.relayDriftPPM = try options.double("relay-drift-ppm", default: 100)!
        guard abs(benchmark.relayDriftPPM) <= 1_000 else { throw CLIError.usage("--relay-drift-ppm wants ppm within ±1000") }
        benchmark.logs = options.value("keep-logs")
        benchmark.mpvArguments = options.value("mpv-args") ?? ""
        if let list = options.value("groups") {
            let names = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            let kinds = AudioBenchmark.Kind.allCases.map(\.rawValue)
            if let unknown = names.first(where: { !kinds.contains($0) }) {
                throw CLIError.usage("--groups: no group '\(unknown)' (the groups: \(kinds.joined(separator: ", ")))")
            }
            benchmark.members = benchmark.members.filter { $0.kind == .tandem || names.contains($0.kind.rawValue) }
        }
        let report: AudioBenchmarkReport
        do {
            report = try benchmark.run { printError("bench audio: \($0)…") }
        } catch {
            throw CLIError.failure("\(error)")
        }
        try printReport(report, table: AudioBenchmarkTable.render(report), options: options)
        return 0
    }

    /// The benchmark `tandem bench audio` and `tandem bench all`'s scenario `audio` run.
    static func benchmark(executable: String) -> AudioBenchmark {
        AudioBenchmark(executable: executable)
    }
}
