import Foundation
import TandemBench

/// `tandem bench clock`: the clock synchronization benchmark.
struct BenchClockCommand: Command {
    static let words = ["bench", "clock"]
    static let usage = "bench clock [--json] [--out FILE]"
    static let summary = "compare clock estimators on loopback UDP and simulated networks (build with -c release)"

    static func run(_ arguments: [String]) async throws -> Int32 {
        let options = try Arguments(arguments, options: ["out"], flags: ["json"])
        try options.expectPositionals(atMost: 0)
        let report = try ClockBenchmark().run { printError("bench clock: \($0)…") }
        if options.flags.contains("json") {
            print(String(decoding: try report.json(), as: UTF8.self))
        } else {
            print(ClockBenchmarkTable.render(report), terminator: "")
        }
        if let path = options.value("out") {
            do {
                try report.json().write(to: URL(fileURLWithPath: path))
            } catch {
                throw CLIError.failure("cannot write \(path): \(error.localizedDescription)")
            }
        }
        return 0
    }
}
