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
        try printReport(report, table: RelayBenchmarkTable.render(report), options: options)
        return 0
    }
}
