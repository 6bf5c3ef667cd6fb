import Foundation
import TandemBench

/// `tandem bench cluster --clock`: relays of a cluster keeping one session time (issue 16, part 4).
struct BenchClusterCommand: Command {
    static let words = ["bench", "cluster"]
    static let usage = "bench cluster --clock [--seconds N] [--no-failover] [--json] [--out FILE]"
    static let summary = "a nats-server and three relays with skewed clocks: their agreement and their participants' error (build with -c release)"

    static func run(_ arguments: [String]) async throws -> Int32 {
        let options = try Arguments(arguments, options: ["seconds", "out"], flags: ["clock", "no-failover", "json"])
        try options.expectPositionals(atMost: 0)
        guard options.flags.contains("clock") else {
            throw CLIError.usage("bench cluster measures the cluster's time so far: pass --clock")
        }
        let seconds = try options.double("seconds", default: 10)!
        guard seconds.isFinite, (1...3_600).contains(seconds) else { throw CLIError.usage("--seconds wants 1 to 3600") }
        let benchmark = ClusterClockBenchmark(seconds: seconds, failover: !options.flags.contains("no-failover"))
        let report: ClusterClockReport
        do {
            report = try await benchmark.run { printError("bench cluster: \($0)…") }
        } catch {
            throw CLIError.failure("bench cluster: \(error)")
        }
        print(options.flags.contains("json") ? String(decoding: try report.json(), as: UTF8.self) : report.table, terminator: options.flags.contains("json") ? "\n" : "")
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
