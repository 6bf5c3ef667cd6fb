#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TandemMediaTypes
import TandemHarness
import TandemParty
import TandemClock
import TandemMedia

/// The players' rows of `tandem bench cluster`: four built-in players (real `tandem host` and
/// `tandem join` processes, each with its own injected clock offset and drift, as `tandem bench
/// all` runs its peers) first on one `tandem serve`, then split two and two over two `tandem serve
/// --cluster` processes on a three-node `nats-server` cluster with a user and password, each relay
/// with an injected clock error of its own (`--clock-offset`, `--clock-drift-ppm`). In both, the
/// host plays, the four play for `seconds`, and the presented spread of every frame all four
/// showed is read from their presentation logs.
///
/// With `failover`, the second relay is then killed with SIGKILL while its two participants play:
/// how long until both are connected to the first relay (the other relay of their invite), and
/// until the four present in step again (ten frames in a row within 1 ms).
///
/// A joiner starts at a random relay of the invite: one that starts at the wrong one for the
/// split leaves and joins again (at most 12 times), which `/proc` tells (the relay it holds a TCP
/// connection to). Every wait is bounded, and every process is stopped at the end.
public struct ClusterPlayersBenchmark: Sendable {
    /// The `tandem` executable to run as the relays and the players.
    public var executable: String
    /// The clip every player plays; at least `seconds` plus 10 s long.
    public var clip: String
    /// How long the four play before the kill (or the end), seconds.
    public var seconds: Double
    /// Whether the second relay is killed after `seconds`.
    public var failover: Bool
    /// How long the four play after the kill, seconds.
    public var failoverSeconds = 6.0
    /// How long the players' clocks settle before the play, seconds.
    public var settle = 2.0
    /// The relays' injected clock errors, offset (s) and drift (ppm); the first is the cluster's
    /// time authority (started first), and the single relay runs with it too.
    public var relayErrors: [(offset: Double, driftPPM: Double)] = [(2.5, 10), (-4.75, -40)]
    /// A directory to keep every player's presentation log in (`one-peer-N-….jsonl`,
    /// `two-peer-N-….jsonl`), made if missing; `nil` keeps them in a temporary directory removed
    /// at the end.
    public var logs: String?
    /// Whether the players run with `--wake-guard` (`HeadlessPlayer.Options.wakeGuard`).
    public var wakeGuard = false

    /// A benchmark playing `clip` with `executable` for `seconds`, then killing a relay if `failover`.
    public init(executable: String, clip: String, seconds: Double = 10, failover: Bool = true) {
        self.executable = executable
        self.clip = clip
        self.seconds = seconds
        self.failover = failover
    }

    /// The players: the host and three joiners, with `tandem bench all`'s first four clock errors.
    static let players = 4

    /// Runs one relay, then two; `progress` hears what it is doing. Blocks (it waits on processes).
    public func run(descriptorLimit: UInt64? = nil, progress: (String) -> Void = { _ in }) throws -> ClusterPlayersReport {
        // The relays are `tandem serve` processes of this very executable (`ServeProcess` reads it here).
        setenv("TANDEM_EXECUTABLE", executable, 1)
        let directory = logs.map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("tandem-bench-cluster-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { if logs == nil { try? FileManager.default.removeItem(at: directory) } }

        progress("one relay: starting tandem serve")
        let single = try ServeProcess(arguments: relayArguments(0))
        let one: ClusterPlayersReport.Arrangement
        do {
            defer { single.stop() }
            one = try arrangement(name: "one relay", relays: [single], nats: [], directory: directory.path, failover: false,
                                  progress: progress).arrangement
        }

        progress("two relays: starting a three-node nats-server cluster")
        let nats = try NATSTestCluster(size: 3, authentication: .userPassword(user: "tandem", password: "bench-\(UUID().uuidString.prefix(8))"))
        defer { nats.stop() }
        var relays: [ServeProcess] = []
        defer { for relay in relays { relay.stop() } }
        for index in relayErrors.indices {
            progress("two relays: starting tandem serve --cluster, relay \(Self.relayName(index))")
            relays.append(try ServeProcess(arguments: ["--cluster", nats.url] + relayArguments(index)))
        }
        let two = try arrangement(name: "two relays", relays: relays, nats: Self.children(named: "nats-server"),
                                  directory: directory.path, failover: failover, progress: progress)
        return ClusterPlayersReport(
            playerClocks: (0..<Self.players).map { "peer-\($0) \(SyncBenchmark.clockOffsets[$0]) s \(SyncBenchmark.clockDrifts[$0]) ppm" }
                .joined(separator: ", "),
            seconds: seconds, oneRelay: one, twoRelays: two.arrangement, failover: two.failover, descriptorLimit: descriptorLimit,
            wakeGuard: wakeGuard)
    }

    private func relayArguments(_ index: Int) -> [String] {
        ["--session-epoch", "0", "--clock-offset", "\(relayErrors[index].offset)", "--clock-drift-ppm", "\(relayErrors[index].driftPPM)"]
    }

    /// How often each player sends a chat line across a relay's kill (ns).
    static let lineInterval: Int64 = 250_000_000

    private static func relayName(_ index: Int) -> String { index == 0 ? "A" : "B" }

    /// The four players on `relays` (one, or two split two and two), then the second killed when
    /// `failover`.
    private func arrangement(name: String, relays: [ServeProcess], nats: [Int32], directory: String, failover: Bool,
                             progress: (String) -> Void) throws -> (arrangement: ClusterPlayersReport.Arrangement,
                                                                    failover: ClusterPlayersReport.Failover?) {
        let sampler = ProcessUsageSampler()
        defer { sampler.stop() }
        var labelled: [(name: String, pid: Int32)] = relays.enumerated().map { ("relay \(Self.relayName($0.offset))", $0.element.pid) }
        labelled += nats.enumerated().map { ("nats-server \($0.offset + 1)", $0.element) }
        for entry in labelled { sampler.follow(entry.pid) }
        let ports = relays.map(\.port)
        let tag = relays.count == 1 ? "one" : "two"
        var players: [(process: WatchProcess, log: String)] = []
        var errors: [String] = []
        defer { for player in players { player.process.kill() } }

        func start(_ index: Int, _ arguments: [String], environment: [String: String?] = [:]) throws -> (process: WatchProcess, log: String) {
            let log = directory + "/\(tag)-peer-\(index)-\(UUID().uuidString.prefix(4)).jsonl"
            let options = ["--name", "peer-\(index)", "--events", "json", "--presentation-log", log, "--follow", "scheduled",
                           "--clock-offset", "\(SyncBenchmark.clockOffsets[index])", "--clock-drift-ppm", "\(SyncBenchmark.clockDrifts[index])",
                           "--video", "none", "--audio", "none"]
                + (wakeGuard ? ["--wake-guard"] : [])
            let process = try WatchProcess(executable: executable, arguments: arguments + options, name: "peer-\(index)",
                                           acceptsCommands: true, environment: environment)
            sampler.follow(process.processIdentifier)
            return (process, log)
        }

        progress("\(name): the host")
        let host = try start(0, ["host", clip, "--relay", ports.map { "127.0.0.1:\($0)" }.joined(separator: ",")])
        players.append(host)
        guard let invite = host.process.waitForLine(startingWith: "tandem://", timeout: 20), host.process.waitUntilJoined(timeout: 20) else {
            throw BenchmarkError("\(name): the host printed no invite: \(host.process.standardError.suffix(300))")
        }
        // Two on the first relay (the host, which creates the session there, and peer-1), two on the last.
        let wanted = (0..<Self.players).map { ports[$0 < Self.players / 2 ? 0 : ports.count - 1] }
        for index in 1..<Self.players {
            var attempts = 0
            var seen: [String] = []
            while true {
                attempts += 1
                let joiner = try start(index, ["join", clip], environment: ["TANDEM_INVITE": invite])
                guard joiner.process.waitUntilJoined(timeout: 30) else {
                    joiner.process.kill()
                    throw BenchmarkError("\(name): peer-\(index) did not join within 30 s: \(joiner.process.standardError.suffix(300))")
                }
                let found = ports.count == 1 ? wanted[index] : relayPort(of: joiner.process.processIdentifier, among: ports)
                if found == wanted[index] {
                    players.append(joiner)
                    break
                }
                seen.append(found.map(String.init) ?? "none")
                guard attempts < 12 else {
                    throw BenchmarkError("\(name): peer-\(index) never started at relay port \(wanted[index]) (found \(seen.joined(separator: ", ")))")
                }
                joiner.process.send("leave")
                if joiner.process.waitForExit(timeout: 10) == nil { joiner.process.kill() }
            }
        }
        let placement = players.enumerated().map { index, player in
            let port = relayPort(of: player.process.processIdentifier, among: ports)
            return "peer-\(index) " + (port.flatMap { ports.firstIndex(of: $0) }.map(Self.relayName) ?? "?")
        }
        progress("\(name): \(placement.joined(separator: ", ")); settling \(settle) s, then playing \(seconds) s")
        Thread.sleep(forTimeInterval: settle)
        host.process.send("play")
        Thread.sleep(forTimeInterval: seconds)

        var killed: Int64?
        var back: Int64?
        // Chat lines (reliable messages) every player sends across the kill, by player.
        var said: [[String]] = players.map { _ in [] }
        func sayRound() {
            for (index, player) in players.enumerated() {
                let line = "reliable-\(index)-\(said[index].count)"
                player.process.send("say \(line)")
                said[index].append(line)
            }
        }
        if failover, relays.count > 1 {
            progress("\(name): killing relay B (SIGKILL) amid chat lines from all four")
            let moving = players.indices.filter { wanted[$0] == ports[1] }.map { players[$0].process.processIdentifier }
            for _ in 0..<3 { sayRound() }
            killed = SystemClock().instant().nanoseconds
            kill(relays[1].pid, SIGKILL)
            let deadline = killed! + Int64(failoverSeconds * 1e9)
            // The last lines go 2 s before the end, so that they all have time to arrive.
            let lastLine = deadline - 2_000_000_000
            var nextLine = killed! + Self.lineInterval
            while SystemClock().instant().nanoseconds < deadline {
                if back == nil, moving.allSatisfy({ relayPort(of: $0, among: [ports[0]]) == ports[0] }) { back = SystemClock().instant().nanoseconds }
                if SystemClock().instant().nanoseconds >= nextLine, nextLine < lastLine {
                    sayRound()
                    nextLine += Self.lineInterval
                }
                Thread.sleep(forTimeInterval: 0.005)
            }
        }
        let ended = SystemClock().instant().nanoseconds
        for entry in labelled where entry.pid != (killed == nil ? -1 : relays[1].pid) { sampler.sample(entry.pid) }
        for player in players { sampler.sample(player.process.processIdentifier) }
        host.process.send("end")
        for player in players where player.process.waitForExit(timeout: 15) == nil {
            errors.append("\(player.process.name) did not exit within 15 s of the end; killed")
            player.process.kill()
        }

        let events = players.map(\.process.events)
        for (player, list) in zip(players, events) {
            errors += list.filter { $0.event == "error" }.map { "\(player.process.name): \($0.message ?? "error")" }
        }
        let offset = Int64(relayErrors[0].offset * 1e9)
        let changes = ClusterPlayersAnalysis.changes(events, sessionOffset: offset)
        let logs = try players.map { try SyncLogAnalysis.moving(log: $0.log, of: $0.process.name) }
        guard let play = ClusterPlayersAnalysis.playStarted(events, sessionOffset: offset) else {
            throw BenchmarkError("\(name): the play never took effect")
        }
        let steady = ClusterPlayersAnalysis.showings(logs, changes: changes, window: play..<(killed ?? ended))
        let usage = labelled.map { entry in
            PeerUsage(peer: entry.name, cpuPercent: sampler.usage(of: entry.pid)?.cpuPercent, peakMemoryMiB: nil)
        } + players.map { player in
            PeerUsage(peer: player.process.name, cpuPercent: sampler.usage(of: player.process.processIdentifier)?.cpuPercent,
                      peakMemoryMiB: sampler.usage(of: player.process.processIdentifier).map { Double($0.peakResidentBytes) / 1_048_576 })
        }
        let arrangement = ClusterPlayersReport.Arrangement(
            name: name, relayClocks: relays.indices.map { "\(Self.relayName($0)) \(relayErrors[$0].offset) s \(relayErrors[$0].driftPPM) ppm" }
                .joined(separator: ", "),
            placement: placement, spread: Percentiles(steady.map(\.presentedSpread)),
            scheduledSpread: Percentiles(steady.map(\.scheduledSpread)), frames: steady.count,
            framesApart: steady.count { $0.presentedSpread > 0.5 }, usage: usage, errors: errors)
        guard let killed else { return (arrangement, nil) }
        let after = ClusterPlayersAnalysis.showings(logs, changes: changes, window: killed..<ended)
        let inStep = back.flatMap { ClusterPlayersAnalysis.inStepAgain(after, after: $0) }
        let heard = events.map { list in list.compactMap { event -> String? in
            guard case let .chat(chat) = event.payload, chat.text.hasPrefix("reliable-") else { return nil }
            return chat.text
        } }
        let delivery = ClusterPlayersAnalysis.reliableDelivery(sent: said, heard: heard)
        return (arrangement, ClusterPlayersReport.Failover(
            backSeconds: back.map { Double($0 - killed) / 1e9 }, inStepSeconds: inStep.map { Double($0 - killed) / 1e9 },
            spreadAfter: Percentiles(after.map(\.presentedSpread)), frames: after.count,
            reliableSent: delivery.sent, reliableLost: delivery.lost, reliableDuplicated: delivery.duplicated))
    }

    /// The relay of `ports` that `pid` is connected to, read a few times over 0.5 s (a link that
    /// has just joined is connected; one moving to another relay is not for a moment).
    private func relayPort(of pid: Int32, among ports: [UInt16]) -> UInt16? {
        for _ in 0..<50 {
            if let port = ClusterPlayersAnalysis.relayPort(of: pid, among: ports) { return port }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return nil
    }

    /// This process's children whose command is `command` (the NATS nodes it started).
    static func children(named command: String) -> [Int32] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.flatMap { task in
            ((try? String(contentsOfFile: "/proc/self/task/\(task)/children", encoding: .utf8)) ?? "").split(separator: " ").compactMap { Int32($0) }
        }.filter { pid in
            (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) == command
        }
    }

    /// Raises this process's limit of open descriptors to its hard limit (its children inherit
    /// it); returns the limit in force.
    public static func raiseDescriptorLimit() -> UInt64? {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return UInt64(limit.rlim_cur)
    }
}
