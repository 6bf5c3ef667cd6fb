import Foundation
import TandemBench

/// `tandem bench relay`: the relay benchmark.
struct BenchRelayCommand: Command {
    static let words = ["bench", "relay"]
    static let usage = "bench relay [--json] [--out FILE]"
    static let summary = "200 participants in one session and 1,000 sessions of two on a loopback relay (build with -c release)"

    static func run(_ arguments: [String]) async throws -> Int32 {
        let options = try Arguments(arguments, options: ["out"], flags: ["json"])
        try options.expectPositionals(atMost: 0)
        let report = try await RelayBenchmark().run { printError("bench relay: \($0)…") }
        if options.flags.contains("json") {
            try printJSON(report)
        } else {
            print(RelayBenchmarkTable.render(report), terminator: "")
        }
        if let path = options.value("out") {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            do {
                try encoder.encode(report).write(to: URL(fileURLWithPath: path))
            } catch {
                throw CLIError.failure("cannot write \(path): \(error.localizedDescription)")
            }
        }
        return 0
    }
}
