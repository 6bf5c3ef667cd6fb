import Foundation
import TandemHarness

/// The processes of one `tandem bench sync` run: starts the host and the joiners, drives the
/// host's script, brings in the late joiner, ends the session, and collects what each printed.
struct SyncSession {
    /// One peer process, once it has finished (or been killed).
    struct PeerRun {
        var name: String
        var clockOffset: Double
        var clockDrift: Double
        var log: String
        var events: [WatchEvent]
        var exitStatus: Int32?
        var started: Int64
    }

    /// A command written to the host and the timeline change it became.
    struct CommandRun {
        var command: String
        var written: Int64
        var change: WatchEvent?
    }

    /// Everything a run produced.
    struct Outcome {
        /// The host first, then the joiners, then the late joiner (when it started).
        var peers: [PeerRun]
        var commands: [CommandRun]
        var hasLateJoiner: Bool
    }

    let executable: String
    let clip: String
    let directory: String
    private var processes: [(process: WatchProcess, offset: Double, drift: Double, log: String)] = []

    init(executable: String, clip: String, directory: String) {
        self.executable = executable
        self.clip = clip
        self.directory = directory
    }

    /// Kills whatever still runs.
    func killAll() {
        for entry in processes { entry.process.kill() }
    }

    mutating func run(peers: Int, progress: (String) -> Void) throws -> Outcome {
        progress("starting the host and \(peers - 1) joiner(s)")
        // `--session-epoch 0`: session instants on the presentation logs' raw monotonic clock.
        let host = try start(index: 0, arguments: ["host", clip, "--bind", "127.0.0.1", "--port", "0", "--session-epoch", "0"])
        guard let invite = host.waitForLine(startingWith: "tandem://", timeout: 20) else {
            throw failure("the host printed no invite", host)
        }
        for index in 1..<peers {
            _ = try start(index: index, arguments: ["join", clip], environment: ["TANDEM_INVITE": invite])
        }
        // Each peer's own `joined` event, not the host's `participant-joined`: the host hears of a
        // joiner only once it next sends something itself (a participant's presence that
        // reaches it before the relay's notice of the join is dropped), so those come late.
        let deadline = Date().addingTimeInterval(30)
        for entry in processes {
            let joined = entry.process.waitUntil(timeout: max(deadline.timeIntervalSinceNow, 0)) { $0.contains { $0.event == "joined" } }
            guard joined else { throw failure("\(entry.process.name) did not join within 30 s", host) }
        }
        // Let the joiners' clock estimates settle before the first change.
        Thread.sleep(forTimeInterval: 2)

        // Changes are read off the first joiner: the host prints its own events late (each only
        // once its next command arrives), although it applies them on time.
        let witness = processes[1].process
        var commands: [CommandRun] = []
        for step in SyncBenchmark.script {
            progress(step.command)
            commands.append(try command(step.command, host: host, witness: witness))
            Thread.sleep(forTimeInterval: step.hold)
        }

        progress("a late joiner")
        let late = try start(index: peers, arguments: ["join", clip], environment: ["TANDEM_INVITE": invite])
        let lateJoined = late.waitUntil(timeout: 15) { $0.contains { $0.event == "joined" } }
        Thread.sleep(forTimeInterval: lateJoined ? SyncBenchmark.lateJoinHold : 0)
        commands.append(try command("pause", host: host, witness: witness))
        Thread.sleep(forTimeInterval: SyncBenchmark.finalPause)

        progress("ending the session")
        host.send("end")
        host.closeInput()
        var statuses: [Int32?] = []
        for entry in processes {
            let status = entry.process.waitForExit(timeout: 15)
            if status == nil { entry.process.kill() }
            statuses.append(status)
        }
        let runs = processes.enumerated().map { index, entry in
            PeerRun(name: entry.process.name, clockOffset: entry.offset, clockDrift: entry.drift, log: entry.log,
                    events: entry.process.events, exitStatus: statuses[index], started: entry.process.startedNanoseconds)
        }
        return Outcome(peers: runs, commands: commands, hasLateJoiner: lateJoined)
    }

    /// Writes `line` to the host and waits for the timeline change it makes to reach `witness`.
    private func command(_ line: String, host: WatchProcess, witness: WatchProcess) throws -> CommandRun {
        let before = witness.events.compactMap { $0.event == "timeline" ? $0.version : nil }.max() ?? 0
        guard let written = host.send(line) else { throw failure("cannot write '\(line)' to the host", host) }
        var change: WatchEvent?
        _ = witness.waitUntil(timeout: 5) { events in
            // Not by name: a joiner that missed the host's presence names it by its id.
            change = events.first { event in
                event.event == "timeline" && (event.version ?? 0) > before
                    && ["play", "pause", "seek", "rate"].contains { event.change?.hasPrefix($0) == true }
            }
            return change != nil
        }
        return CommandRun(command: line, written: written, change: change)
    }

    /// Starts peer `index` (`peer-0` is the host) with its own clock, events and log.
    private mutating func start(index: Int, arguments: [String], environment: [String: String?] = [:]) throws -> WatchProcess {
        let offset = SyncBenchmark.clockOffsets[min(index, SyncBenchmark.clockOffsets.count - 1)]
        let drift = SyncBenchmark.clockDrifts[min(index, SyncBenchmark.clockDrifts.count - 1)]
        let name = "peer-\(index)"
        let log = directory + "/\(name).jsonl"
        let process = try WatchProcess(
            executable: executable,
            arguments: arguments + ["--name", name, "--events", "json", "--presentation-log", log,
                                    "--clock-offset", "\(offset)", "--clock-drift-ppm", "\(drift)"],
            name: name, acceptsCommands: index == 0, environment: environment)
        processes.append((process, offset, drift, log))
        return process
    }

    /// Kills every peer and says what went wrong, with the last line each peer wrote on
    /// standard error.
    private func failure(_ message: String, _ host: WatchProcess) -> BenchmarkError {
        killAll()
        let details = processes.compactMap { entry in
            entry.process.standardError.split(separator: "\n").last.map { "\(entry.process.name): \($0)" }
        }
        return BenchmarkError(([message] + details).joined(separator: "; "))
    }
}
