import Foundation
import TandemBench

/// `tandem bench present FILE [--runs K] [--rate R] [--json]`: presentation lateness.
enum BenchPresentCommand: Command {
    static let words = ["bench", "present"]
    static let usage = "bench present FILE [--runs K] [--rate R] [--json]"
    static let summary = "presentation lateness against the schedule, from the presentation log, sleeping vs spinning"

    static func run(_ arguments: [String]) async throws -> Int32 {
        let arguments = try Arguments(arguments, options: ["runs", "rate"], flags: ["json"])
        try arguments.expectPositionals(atMost: 1)
        let path = try arguments.positional(0, "FILE")
        let runs = try arguments.int("runs", default: 3)!
        let rate = try arguments.double("rate", default: 1)!
        guard runs >= 1 else { throw CLIError.usage("--runs must be at least 1") }
        guard rate >= 0.25 && rate <= 4 else { throw CLIError.usage("--rate must be between 0.25 and 4") }
        let rows: [PresentationBenchmark.Row]
        do {
            rows = try PresentationBenchmark(file: path, runs: runs, rate: rate).run()
        } catch {
            throw CLIError.failure("\(error)")
        }
        if arguments.flags.contains("json") {
            try printJSON(rows)
            return 0
        }
        print("presentation lateness: \(path), \(runs) run(s) per mode at rate \(rate)")
        print("| mode | frames | dropped | p50 ms | p90 ms | p99 ms | max ms |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for row in rows {
            guard let l = row.latenessMilliseconds else {
                print("| \(row.mode) | 0 | \(row.dropped) | - | - | - | - |")
                continue
            }
            print("| \(row.mode) | \(row.frames) | \(row.dropped) | "
                + String(format: "%.3f | %.3f | %.3f | %.3f |", l.p50, l.p90, l.p99, l.max))
        }
        return 0
    }
}
