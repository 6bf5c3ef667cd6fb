import Foundation
import TandemBench

/// `tandem bench sync`: peers in separate processes watch together; how closely they present.
/// It is the suite's scenario `sync`, run by the suite's runner (`tandem bench all --scenario
/// sync` runs it by both modes).
enum BenchSyncCommand: Command {
    static let words = ["bench", "sync"]
    static let usage = "bench sync [--peers N] [--clip PATH] [--json] [--out FILE]"
    static let summary = "peers as processes on loopback with injected clocks: inter-peer presentation spread, "
        + "command to effect, a late joiner: the suite's scenario sync (build with -c release)"

    static func run(_ arguments: [String]) async throws -> Int32 {
        let options = try Arguments(arguments, options: ["peers", "clip", "out"], flags: ["json"])
        try options.expectPositionals(atMost: 0)
        let peers = try options.int("peers", default: 4)!
        guard (2...SyncBenchmark.maximumPeers).contains(peers) else {
            throw CLIError.usage("--peers must be 2…\(SyncBenchmark.maximumPeers)")
        }
        let clip = options.value("clip")
        if let clip {
            _ = try HostCommand.checkedMedia(clip)
        }
        let benchmark = SyncBenchmark(peers: peers, clip: clip, executable: try executablePath())
        let report: SyncBenchmarkReport
        do {
            report = try benchmark.run { printError("bench sync: \($0)…") }
        } catch {
            throw CLIError.failure("\(error)")
        }
        try printReport(report, table: SyncBenchmarkTable.render(report), options: options)
        return 0
    }

    /// This very executable, which the benchmark runs again as each peer.
    static func executablePath() throws(CLIError) -> String {
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return path }
        let argument = ProcessInfo.processInfo.arguments[0]
        guard FileManager.default.isExecutableFile(atPath: argument) else {
            throw .failure("cannot find the tandem executable to run as the peers")
        }
        return URL(fileURLWithPath: argument).standardizedFileURL.path
    }
}
