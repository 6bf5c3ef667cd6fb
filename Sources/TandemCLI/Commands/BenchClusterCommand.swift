import Foundation
import TandemBench

/// `tandem bench cluster`: relays of a NATS cluster beside a single relay. Every row by default; `--players` four built-in players split over two relays (and
/// the same four on one relay), `--failover` the second relay killed while they play (implies
/// the players), `--sessions N` ordered delivery for N sessions of four over three relays (1,000
/// by default; `--ordered` alone; the same NATS cluster alone in the relays' shape first, every
/// chain at once, then paced at each of the relays' rates),
/// `--joins-only` only the three relays' joins of those sessions (run after run, for a join
/// refused), `--clock` the relays' cluster time. `--seconds N` is how long the
/// players play (at most 60) and the clock is read (10); `--no-failover` kills neither relay B
/// nor the clock's authority; `--keep-logs DIR` keeps the players' presentation logs there;
/// `--wake-guard` runs the players with theirs. It raises its descriptor limit first; a row that
/// fails is said at the end (exit 1) and the others are still shown.
struct BenchClusterCommand: Command {
    static let words = ["bench", "cluster"]
    static let usage = "bench cluster [--players] [--failover] [--ordered] [--sessions N] [--joins-only] [--clock] [--seconds SECONDS] [--clip PATH] [--no-failover] [--keep-logs DIR] [--wake-guard] [--json] [--out FILE]"
    static let summary = "relays on a 3-node nats-server cluster beside one relay: players' spread, a relay killed, ordered delivery, cluster time (build with -c release)"

    static func run(_ arguments: [String]) async throws -> Int32 {
        let options = try Arguments(arguments, options: ["seconds", "out", "clip", "sessions", "keep-logs"],
                                    flags: ["clock", "players", "failover", "ordered", "no-failover", "json", "wake-guard", "joins-only"])
        try options.expectPositionals(atMost: 0)
        var chosen = options.flags.intersection(["clock", "players", "failover", "ordered"])
        if options.value("sessions") != nil || options.flags.contains("joins-only") { chosen.insert("ordered") }
        let rows = chosen.isEmpty ? Set(["clock", "players", "failover", "ordered"]) : chosen
        let sessions = try options.int("sessions", default: 1_000)!
        guard (1...10_000).contains(sessions) else { throw CLIError.usage("--sessions wants 1 to 10000") }
        let seconds = try options.double("seconds", default: 10)!
        guard seconds.isFinite, (1...3_600).contains(seconds) else { throw CLIError.usage("--seconds wants 1 to 3600") }
        let descriptors = ClusterPlayersBenchmark.raiseDescriptorLimit()
        var report = ClusterBenchReport(machine: ClusterBenchReport.machine, loadAverage: ClusterBenchReport.loadAverage())
        let progress: @Sendable (String) -> Void = { printError("bench cluster: \($0)…") }
        // A row that fails is said at the end; the others are still measured and shown.
        var failures: [String] = []
        if !rows.isDisjoint(with: ["players", "failover"]) {
            let playSeconds = min(seconds, 60)
            let clip = try clusterClip(options.value("clip"), seconds: Int(playSeconds.rounded(.up)) + 15)
            var benchmark = ClusterPlayersBenchmark(executable: try BenchSyncCommand.executablePath(), clip: clip, seconds: playSeconds,
                                                    failover: rows.contains("failover") && !options.flags.contains("no-failover"))
            benchmark.logs = options.value("keep-logs")
            benchmark.wakeGuard = options.flags.contains("wake-guard")
            do {
                report.players = try benchmark.run(descriptorLimit: descriptors, progress: progress)
            } catch {
                failures.append("players: \(error)")
            }
        }
        if rows.contains("ordered") {
            do {
                var benchmark = ClusterOrderedBenchmark(sessions: sessions, executable: try BenchSyncCommand.executablePath())
                benchmark.joinsOnly = options.flags.contains("joins-only")
                report.ordered = try await benchmark.run(progress: progress)
            } catch {
                failures.append("ordered delivery: \(error)")
            }
        }
        if rows.contains("clock") {
            let benchmark = ClusterClockBenchmark(seconds: seconds, failover: !options.flags.contains("no-failover"))
            do {
                report.clock = try await benchmark.run(progress: progress)
            } catch {
                failures.append("cluster time: \(error)")
            }
        }
        if options.flags.contains("json") {
            print(String(decoding: try report.json(), as: UTF8.self))
        } else {
            print(report.table, terminator: "")
        }
        if let path = options.value("out") {
            do {
                try report.json().write(to: URL(fileURLWithPath: path))
            } catch {
                throw CLIError.failure("cannot write \(path): \(error.localizedDescription)")
            }
        }
        for failure in failures { printError("bench cluster: \(failure)") }
        return failures.isEmpty ? 0 : 1
    }

    /// `--clip`, else a clip of `seconds` made once with ffmpeg in the temporary directory.
    private static func clusterClip(_ path: String?, seconds: Int) throws -> String {
        if let path {
            _ = try HostCommand.checkedMedia(path)
            return path
        }
        let made = FileManager.default.temporaryDirectory.appendingPathComponent("tandem-bench-cluster-clip-\(seconds)s.mp4").path
        if !FileManager.default.fileExists(atPath: made) {
            printError("bench cluster: making a \(seconds) s 640x360 clip with ffmpeg")
            do {
                try BenchmarkClip(seconds: seconds).make(at: made)
            } catch {
                throw CLIError.failure("cannot make a clip: \(error)")
            }
        }
        return made
    }
}
