import Foundation
import TandemBench

/// `tandem bench medium [FILE] [--runs K] [--seconds SECONDS] [--json]`: three players under one
/// coordination medium against three players of one session, in the same run.
enum BenchMediumCommand: Command {
    static let words = ["bench", "medium"]
    static let usage = "bench medium [FILE] [--runs K] [--seconds SECONDS] [--json]"
    static let summary = "how close three local players under one coordination medium present frames, beside three players of one session"
    static let options = [
        OptionHelp("FILE", "the video to play (default: a 10 s test pattern made with ffmpeg)"),
        OptionHelp("--runs K", "runs, each playing both groups in turn (default 3)"),
        OptionHelp("--seconds SECONDS", "seconds of play before the seek and after it (default 3)"),
        OptionHelp("--json", "print the rows as JSON"),
    ]

    static func run(_ arguments: [String]) async throws -> Int32 {
        let arguments = try Arguments(arguments, options: ["runs", "seconds"], flags: ["json"])
        try arguments.expectPositionals(atMost: 1)
        let runs = try arguments.int("runs", default: 3)!
        let seconds = try arguments.double("seconds", default: 3)!
        guard runs >= 1 && runs <= 100 else { throw CLIError.usage("--runs must be between 1 and 100") }
        guard seconds >= 0.5 && seconds <= 60 else { throw CLIError.usage("--seconds must be between 0.5 and 60") }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tandem-bench-medium-clip-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path: String
        if arguments.positionals.isEmpty {
            path = directory.appendingPathComponent("pattern.mp4").path
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                try BenchmarkClip(seconds: 10).make(at: path)
            } catch {
                throw CLIError.failure("cannot make the test pattern: \(error)")
            }
        } else {
            path = try arguments.positional(0, "FILE")
        }
        let rows: [MediumBenchmark.Row]
        do {
            rows = try await MediumBenchmark(file: path, runs: runs, seconds: seconds).run()
        } catch {
            throw CLIError.failure("\(error)")
        }
        if arguments.flags.contains("json") {
            try printJSON(rows)
            return 0
        }
        print("presented spread of three players (max - min per frame all three showed), \(runs) run(s) of \(seconds) s + \(seconds) s")
        print("| group | frames | unpaired | median ms | p90 ms | p99 ms | max ms |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for row in rows {
            guard let spread = row.spreadMilliseconds else {
                print("| \(row.group) | 0 | \(row.unpaired) | - | - | - | - |")
                continue
            }
            print("| \(row.group) | \(row.frames) | \(row.unpaired) | "
                + String(format: "%.3f | %.3f | %.3f | %.3f |", spread.p50, spread.p90, spread.p99, spread.max))
        }
        if let session = rows.first?.spreadMilliseconds?.p99, let medium = rows.last?.spreadMilliseconds?.p99, session > 0 {
            print(String(format: "medium p99 / session p99: %.2f", medium / session))
        }
        return 0
    }
}
