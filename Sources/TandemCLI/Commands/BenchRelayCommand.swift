import Foundation
import TandemBench

/// `tandem bench relay`: the relay benchmark; with `--adversarial`, the relay as its own process
/// under attack, beside the quiet run of the same honest load.
struct BenchRelayCommand: Command {
    static let words = ["bench", "relay"]
    static let usage = "bench relay [--adversarial [--each]] [--participants N] [--json] [--out FILE]"
    static let summary = "200 participants in one session and 1,000 sessions of two on a loopback relay; --adversarial: "
        + "a `tandem serve` relay, quiet and then under 50 attacking connections (build with -c release)"

    static func run(_ arguments: [String]) async throws -> Int32 {
        let options = try Arguments(arguments, options: ["out", "participants"], flags: ["json", "adversarial", "each"])
        try options.expectPositionals(atMost: 0)
        guard let participants = try options.int("participants", default: 200), participants >= 2, participants <= 1_000 else {
            throw CLIError.usage("--participants must be 2…1000")
        }
        if options.flags.contains("adversarial") {
            var benchmark = RelayAdversarialBenchmark(executable: try BenchSyncCommand.executablePath())
            benchmark.participants = participants
            benchmark.eachAttack = options.flags.contains("each")
            let report = try await benchmark.run { printError("bench relay: \($0)…") }
            try printReport(report, table: RelayBenchmarkTable.render(report), options: options)
            return 0
        }
        var benchmark = RelayBenchmark()
        benchmark.participants = participants
        let report = try await benchmark.run { printError("bench relay: \($0)…") }
        try printReport(report, table: RelayBenchmarkTable.render(report), options: options)
        return 0
    }
}
