import Foundation
import TandemClock
import TandemNet
import TandemNetsim
import TandemHarness

/// The processes of one scenario in one mode: starts the host and the joiners (each joiner
/// through its own impairment proxy when the scenario says so), follows the script, ends the
/// session, and collects what each peer printed and logged and what it cost.
struct ScenarioRun {
    /// One peer process, once it has finished (or been killed).
    struct Peer {
        var name: String
        var index: Int
        var log: String
        var events: [WatchEvent]
        var exitStatus: Int32?
        /// When its process started (raw monotonic ns).
        var started: Int64
        /// Whether it joined after the script began (a late joiner, or a peer joining again).
        var joinedDuringScript: Bool
        var usage: PeerUsage
        /// The instant it printed its `joined` event (raw monotonic ns), when it said (a
        /// streaming joiner does).
        var joinedAt: Int64? = nil
    }

    /// A command line written to a peer.
    struct Command {
        var peer: Int
        var line: String
        /// Raw monotonic ns, just before the write.
        var written: Int64
    }

    /// Everything a run produced.
    struct Outcome {
        var peers: [Peer]
        var commands: [Command]
        /// When the script's first step began (raw monotonic ns).
        var scriptStarted: Int64
        var errors: [String]
        /// What the raw client did, when the script had one (`Scenario.Step.proposals`).
        var proposals: RawProposer.Outcome? = nil
        /// Each `leave` written to a peer (`Scenario.Step.leave`).
        var leaves: [Command] = []
        /// With mpv: the flips of each peer's mpv over the script (the peers there when it
        /// began), by the frame-flip probe.
        var flips: [[FrameFlipProbe.Flip]]? = nil
    }

    let scenario: Scenario
    let mode: SyncMode
    let executable: String
    let clip: String
    let directory: String
    /// How long the joiners' clocks settle before the script begins (seconds).
    var settle = 2.0
    /// Media every peer plays after `clip`, in order (`tandem host FILE…`, `join FILE…`).
    var queue: [String] = []
    /// Whether each peer's standard output and error are written beside its presentation log
    /// when the run ends (`<log>.out`, each line after the ms since its process started;
    /// `<log>.err`).
    var keepsTranscripts = false

    private var processes: [(process: WatchProcess, index: Int, log: String, duringScript: Bool)] = []
    private var proxies: [Int: NetsimProxy] = [:]
    private var commands: [Command] = []
    private var leaves: [Command] = []
    /// Peers whose latest process left (`Scenario.Step.leave`) and did not join again.
    private var departed: Set<Int> = []
    private var errors: [String] = []
    private var invite = ""
    private var scriptStarted: Int64 = 0
    private var proposals: RawProposer.Outcome?
    private let sampler = ProcessUsageSampler()

    init(scenario: Scenario, mode: SyncMode, executable: String, clip: String, directory: String) {
        self.scenario = scenario
        self.mode = mode
        self.executable = executable
        self.clip = clip
        self.directory = directory
    }

    /// Kills whatever still runs and stops the proxies.
    func tearDown() {
        for entry in processes { entry.process.kill() }
        for proxy in proxies.values { proxy.stop() }
        sampler.stop()
    }

    mutating func run(progress: (String) -> Void) throws -> Outcome {
        // `--session-epoch 0`: the session clock is the raw monotonic clock of the presentation logs,
        // so that the analysis compares effective and presented instants directly.
        let host = try start(index: 0, arguments: ["host", clip] + queue + ["--bind", "127.0.0.1", "--port", "0", "--session-epoch", "0"])
        guard let line = host.waitForLine(startingWith: "tandem://", timeout: 20) else {
            throw failure("the host printed no invite")
        }
        invite = line
        for index in 1..<scenario.peers {
            _ = try join(index)
        }
        let deadline = Date().addingTimeInterval(30)
        for entry in processes {
            let joined = entry.process.waitUntil(timeout: max(deadline.timeIntervalSinceNow, 0)) { $0.contains { $0.event == "joined" } }
            guard joined else { throw failure("\(entry.process.name) did not join within 30 s") }
        }
        Thread.sleep(forTimeInterval: settle)
        // With mpv, what each mpv shows is watched over the script, as another tool would.
        var probe: FrameFlipProbe?
        if scenario.player == .mpv {
            do {
                probe = try FrameFlipProbe(sockets: processes.map { mpvSocket($0.log) })
            } catch {
                errors.append("the frame-flip probe: \(error)")
            }
        }
        probe?.start()

        scriptStarted = SystemClock().instant().nanoseconds
        for step in scenario.steps {
            switch step {
            case .commands(let lines):
                progress(lines.map { "peer-\($0.peer): \($0.line)" }.joined(separator: ", "))
                for command in lines { send(command.line, to: command.peer) }
            case .hold(let seconds):
                Thread.sleep(forTimeInterval: seconds)
            case .join(let index):
                progress("peer-\(index) joins")
                departed.remove(index)
                let process = try join(index, duringScript: true)
                if !process.waitUntil(timeout: 15, { $0.contains { $0.event == "joined" } }) {
                    errors.append("\(process.name) did not join within 15 s")
                }
            case .proposals(let count):
                progress("a raw client makes \(count) proposals")
                do {
                    proposals = try RawProposer(count: count).run(invite: invite)
                } catch {
                    errors.append("\(error)")
                }
                let seconds = waitUntilPeersAreQuiet()
                progress("the peers applied the history in \(String(format: "%.1f", seconds)) s more")
            case .leave(let index):
                progress("peer-\(index) leaves")
                guard let entry = processes.last(where: { $0.index == index }) else { continue }
                sampler.sample(entry.process.processIdentifier)
                if let written = entry.process.send("leave") { leaves.append(Command(peer: index, line: "leave", written: written)) }
                departed.insert(index)
                if entry.process.waitForExit(timeout: 10) == nil { errors.append("\(entry.process.name) did not leave within 10 s") }
            }
        }

        let flips = probe?.stop()
        for entry in processes { sampler.sample(entry.process.processIdentifier) }
        // Operators end a hosted party: the host, or once it left, whoever took the role over (the
        // longest present by the order of first records, which timing decides), as the latest
        // `roles` event the first peer still there saw names them.
        let remaining = scenario.allPeers.filter { !departed.contains($0) }.compactMap { index in processes.last { $0.index == index } }
        let operators = remaining.first?.process.events.reversed().lazy.compactMap { event -> [String]? in
            guard case .roles(let roles) = event.payload else { return nil }
            return roles.operators
        }.first ?? []
        let ender = remaining.first { operators.contains($0.process.name) } ?? remaining.first
        ender?.process.send("end")
        var statuses: [Int32?] = []
        for entry in processes {
            let status = entry.process.waitForExit(timeout: 15)
            if status == nil {
                errors.append("\(entry.process.name) did not exit within 15 s of the end; killed")
                entry.process.kill()
            }
            statuses.append(status)
        }
        if keepsTranscripts { writeTranscripts() }
        let peers = processes.enumerated().map { position, entry in
            let usage = sampler.usage(of: entry.process.processIdentifier)
            return Peer(name: entry.process.name, index: entry.index, log: entry.log, events: entry.process.events,
                        exitStatus: statuses[position], started: entry.process.startedNanoseconds,
                        joinedDuringScript: entry.duringScript,
                        usage: PeerUsage(peer: entry.process.name, cpuPercent: usage?.cpuPercent,
                                         peakMemoryMiB: usage.map { Double($0.peakResidentBytes) / 1_048_576 }),
                        joinedAt: ScenarioAnalysis.joinedInstant(entry.process.lines))
        }
        for peer in peers {
            errors += peer.events.filter { $0.event == "error" }.map { "\(peer.name): \($0.message ?? "error")" }
        }
        return Outcome(peers: peers, commands: commands, scriptStarted: scriptStarted, errors: errors, proposals: proposals,
                       leaves: leaves, flips: flips)
    }

    /// Waits until every peer uses under a fifth of a core (over half a second), at most 60 s;
    /// returns how long it waited (s). After a raw client's burst of proposals the peers are
    /// still opening and checking each record (an Ed25519 signature each, tens of µs): the
    /// history of hours made in seconds. The script goes on once they have caught up, as they
    /// would have long before anyone joined a real session, so that a late joiner is measured
    /// against peers that play, not peers still busy with 100,000 records.
    private func waitUntilPeersAreQuiet() -> Double {
        let began = SystemClock().instant().nanoseconds
        let pids = processes.map(\.process.processIdentifier)
        func cpu() -> [Double] {
            pids.map { pid in
                sampler.sample(pid)
                return sampler.usage(of: pid)?.cpuSeconds ?? 0
            }
        }
        var last = cpu()
        // Bounded: 120 steps of half a second.
        for _ in 0..<120 {
            Thread.sleep(forTimeInterval: 0.5)
            let now = cpu()
            let quiet = zip(last, now).allSatisfy { $1 - $0 < 0.1 }
            last = now
            if quiet { break }
        }
        return Double(SystemClock().instant().nanoseconds - began) / 1e9
    }

    /// Writes `line` to the latest process of peer `index`.
    private mutating func send(_ line: String, to index: Int) {
        guard let entry = processes.last(where: { $0.index == index }), let written = entry.process.send(line) else {
            errors.append("cannot write '\(line)' to peer-\(index)")
            return
        }
        commands.append(Command(peer: index, line: line, written: written))
    }

    /// Starts joiner `index`, through its proxy when its path is impaired.
    private mutating func join(_ index: Int, duringScript: Bool = false) throws -> WatchProcess {
        var target = invite
        if let impairment = scenario.impairments[index] {
            let proxy = try proxies[index] ?? makeProxy(impairment, seed: UInt64(index))
            proxies[index] = proxy
            target = try ScenarioRun.invite(invite, throughPort: proxy.address.port)
        }
        // The invite travels in the environment, as people should pass it: out of `ps`'s sight.
        let media = scenario.streamingJoiners.contains(index) ? [] : [clip] + queue
        return try start(index: index, arguments: ["join"] + media, duringScript: duringScript, environment: ["TANDEM_INVITE": target])
    }

    private func makeProxy(_ impairment: Impairment, seed: UInt64) throws -> NetsimProxy {
        guard let relay = ScenarioRun.port(of: invite) else { throw failure("cannot read the port of the invite the host printed") }
        let proxy = try NetsimProxy(address: try SocketAddress(host: "127.0.0.1", port: 0),
                                    target: try SocketAddress(host: "127.0.0.1", port: relay),
                                    impairment: impairment, seed: seed)
        proxy.start()
        return proxy
    }

    /// Starts peer `index` with its own clock, events, log and mode.
    private mutating func start(index: Int, arguments: [String], duringScript: Bool = false,
                                environment: [String: String?] = [:]) throws -> WatchProcess {
        let offset = SyncBenchmark.clockOffsets[index % SyncBenchmark.clockOffsets.count]
        let drift = SyncBenchmark.clockDrifts[index % SyncBenchmark.clockDrifts.count]
        let name = "peer-\(index)"
        let runs = processes.filter { $0.index == index }.count
        let log = directory + "/\(scenario.name)-\(mode.rawValue)-\(name)" + (runs > 0 ? "-\(runs + 1)" : "") + ".jsonl"
        var options = ["--name", name, "--events", "json", "--presentation-log", log, "--follow", mode == .onReceipt ? "on-receipt" : "scheduled",
                       "--clock-offset", "\(offset)", "--clock-drift-ppm", "\(drift)"]
        // Neither picture nor sound, said explicitly rather than left to there being no terminal.
        if scenario.player == .mpv {
            options += ["--player", "mpv", "--mpv-args", "--vo=null --ao=null", "--mpv-ipc", mpvSocket(log)]
        } else {
            options += ["--video", "none", "--audio", "none"]
        }
        let process = try WatchProcess(executable: executable, arguments: arguments + options, name: name, acceptsCommands: true,
                                       environment: environment)
        sampler.follow(process.processIdentifier)
        processes.append((process, index, log, duringScript))
        return process
    }

    /// Writes each peer's transcripts beside its presentation log; one that cannot be written is
    /// an error of the run, which goes on.
    private mutating func writeTranscripts() {
        for entry in processes {
            let stem = Self.stem(of: entry.log)
            let started = entry.process.startedNanoseconds
            let header = "# \(entry.process.name)'s standard output; each line after the ms since its process started, at \(started) ns (raw CLOCK_MONOTONIC)"
            let output = [header] + entry.process.timedLines.map { String(format: "%10.3f ", Double($0.receivedNanoseconds - started) / 1e6) + $0.line }
            do {
                try (output.joined(separator: "\n") + "\n").write(toFile: stem + ".out", atomically: true, encoding: .utf8)
                try entry.process.standardError.write(toFile: stem + ".err", atomically: true, encoding: .utf8)
            } catch {
                errors.append("cannot keep \(entry.process.name)'s transcript: \(error)")
            }
        }
    }

    /// The IPC socket of the mpv of the peer process whose log is `log`.
    private func mpvSocket(_ log: String) -> String {
        Self.stem(of: log) + ".sock"
    }

    /// The presentation log's path without its `.jsonl`: what the peer's other files are named by.
    private static func stem(of log: String) -> String {
        String(log.dropLast(".jsonl".count))
    }

    /// Kills every peer and says what went wrong, with the last line each wrote on standard error.
    private func failure(_ message: String) -> BenchmarkError {
        tearDown()
        let details = processes.compactMap { entry in
            entry.process.standardError.split(separator: "\n").last.map { "\(entry.process.name): \($0)" }
        }
        return BenchmarkError(([message] + details).joined(separator: "; "))
    }

    /// The port of `tandem://HOST:PORT/…`.
    static func port(of invite: String) -> UInt16? {
        guard let components = URLComponents(string: invite), let port = components.port else { return nil }
        return UInt16(exactly: port)
    }

    /// `invite` with its port replaced by `port` (the host stays 127.0.0.1, where the proxy listens).
    static func invite(_ invite: String, throughPort port: UInt16) throws -> String {
        guard var components = URLComponents(string: invite), components.port != nil else {
            throw BenchmarkError("cannot read the relay's port in the invite")
        }
        components.host = "127.0.0.1"
        components.port = Int(port)
        guard let rewritten = components.string else { throw BenchmarkError("cannot rewrite the invite's port") }
        return rewritten
    }
}
