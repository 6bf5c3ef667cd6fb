#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TandemMpv
import TandemClock
import TandemHarness

/// The frame-flip benchmark: `--player mpv` peers (a host and joiners on
/// loopback) over a script of seeks, pauses, resumes and rate changes made in mpv itself (by
/// default mpv's own keys, pressed through its IPC's `keypress`; or property changes, as another
/// tool makes them), measured by `FrameFlipProbe`; and in the same run the floor: as many bare
/// mpv players, unpaused together and left alone.
///
/// ```swift
/// var configuration = FrameFlipBenchmark.Configuration(clip: "watch-together.mp4")
/// let report = try await FrameFlipBenchmark.run(configuration)
/// print(report.table)
/// ```
public enum FrameFlipBenchmark {
    /// What a person does in one mpv.
    public enum Action: Sendable, Hashable, CustomStringConvertible {
        /// Unpause (`set pause no`, the space key).
        case resume
        /// Pause (`set pause yes`).
        case pause
        /// A relative seek by this many seconds, as the arrow keys do (`seek S relative`).
        case seek(Double)
        /// Multiply the speed (`multiply speed F`, as `[` and `]` do).
        case multiplySpeed(Double)
        /// Speed 1 again (`set speed 1`, Backspace).
        case resetSpeed
        /// A key pressed in mpv's window (`keypress KEY`, mpv's name for it: `SPACE`, `LEFT`,
        /// `]`, `BS`), which a `--player mpv` peer takes to the group.
        case key(String)

        /// The IPC command.
        public var command: [Any] {
            switch self {
            case .resume: ["set_property", "pause", false]
            case .pause: ["set_property", "pause", true]
            case .seek(let seconds): ["seek", seconds, "relative"]
            case .multiplySpeed(let factor): ["multiply", "speed", factor]
            case .resetSpeed: ["set_property", "speed", 1.0]
            case .key(let key): ["keypress", key]
            }
        }

        /// A short name for reports.
        public var description: String {
            switch self {
            case .resume: "resume"
            case .pause: "pause"
            case .seek(let seconds): "seek \(seconds)"
            case .multiplySpeed(let factor): "speed ×\(factor)"
            case .resetSpeed: "speed 1"
            case .key(let key): "key \(key)"
            }
        }
    }

    /// One step of the script: `action` in the mpv of peer `peer` (0 is the host's), then a wait.
    public struct Step: Sendable, Hashable {
        /// Whose mpv (0: the host's).
        public var peer: Int
        /// What the person does.
        public var action: Action
        /// How long to wait afterwards (s).
        public var then: Double

        /// `action` in peer `peer`'s mpv, then `then` seconds.
        public init(peer: Int, action: Action, then: Double) {
            self.peer = peer
            self.action = action
            self.then = then
        }
    }

    /// The default script (about 20 s, within the 20 s sample clip): a start, seeks both ways,
    /// a rate change and back, a pause and a resume, each a key pressed in one peer's mpv or
    /// another's (mpv's keys, which Tandem binds to the group: `SPACE` plays or pauses, `RIGHT`
    /// and `LEFT` seek 5 s, `]` is 0.1 faster, `BS` the rate 1 again).
    public static let defaultScript: [Step] = [
        Step(peer: 0, action: .key("SPACE"), then: 3),
        Step(peer: 1, action: .key("RIGHT"), then: 2.5),
        Step(peer: 0, action: .key("]"), then: 2.5),
        Step(peer: 1, action: .key("SPACE"), then: 1.5),
        Step(peer: 0, action: .key("SPACE"), then: 2.5),
        Step(peer: 0, action: .key("LEFT"), then: 2.5),
        Step(peer: 1, action: .key("BS"), then: 2.5),
        Step(peer: 1, action: .key("LEFT"), then: 2.5),
    ]

    /// The same kind of script made as another tool makes changes over mpv's IPC, setting its
    /// properties: mpv carries each out at once, and the group follows it after its lead.
    public static let ipcScript: [Step] = [
        Step(peer: 0, action: .resume, then: 3),
        Step(peer: 1, action: .seek(4), then: 2.5),
        Step(peer: 0, action: .multiplySpeed(1.1), then: 2.5),
        Step(peer: 1, action: .pause, then: 1.5),
        Step(peer: 0, action: .resume, then: 2.5),
        Step(peer: 0, action: .seek(-6), then: 2.5),
        Step(peer: 1, action: .resetSpeed, then: 2.5),
        Step(peer: 1, action: .seek(-3), then: 2.5),
    ]

    /// How to run it.
    public struct Configuration: Sendable {
        /// The clip every peer plays (with sound: the player's precise clock).
        public var clip: String
        /// How many peers (a host and joiners), and as many bare mpv for the floor.
        public var peers = 2
        /// mpv's options: headless by default; `--vo=x11 --ao=null` with `environment` naming a
        /// virtual display (`XvfbDisplay`).
        public var mpvArguments = "--vo=null --ao=null"
        /// Variables for every process (`DISPLAY`).
        public var environment: [String: String?] = [:]
        /// The script the peers play through.
        public var script = FrameFlipBenchmark.defaultScript
        /// How long the floor's mpv play (s).
        public var floorSeconds = 10.0
        /// Where the probe's sockets go (a fresh directory).
        public var directory: String
        /// The `tandem` binary.
        public var executable = TandemProcess.executablePath
        /// More options for every `tandem` peer (a `--follow`, say).
        public var peerArguments: [String] = []
        /// How long the probe's pollers rest between polls (ns).
        public var pollGap: Int64 = 200_000
        /// Whether the floor's bare mpv get the options `tandem` gives its own mpv besides
        /// `mpvArguments` (`MpvProcess.displayTimeArguments`: each frame rendered at its display
        /// time), so that the floor is like for like; true by default.
        public var floorMatchesTandem = true
        /// Whether to measure bare mpv with mpv's own defaults too (rendering up to 50 ms
        /// ahead), reported beside the floor, outside the targets.
        public var measuresDefaultFloor = false

        /// `clip` with the defaults, in a fresh temporary directory.
        public init(clip: String) {
            self.clip = clip
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("tandem-flip-\(UUID().uuidString.prefix(8))").path
        }
    }

    /// What one run measured.
    public struct Report: Sendable {
        /// The peers' spreads (ms), one per frame all of them showed moving.
        public var peerSpreads: [Double]
        /// The floor's.
        public var floorSpreads: [Double]
        /// Bare mpv with mpv's own defaults (`Configuration.measuresDefaultFloor`), if measured.
        public var defaultFloorSpreads: [Double] = []
        /// How many frames each peer's mpv showed (moving or not).
        public var peerFlips: [Int]
        /// How many frames each bare mpv showed.
        public var floorFlips: [Int]
        /// The largest spreads (ms) with the time since the script began (s) and the step last
        /// taken before, for finding where a tail comes from.
        public var largest: [(seconds: Double, spread: Double, after: String)]
        /// Whether mpv drew (`--vo` other than `null`).
        public var mode: String
        /// Every flip: each peer's, then each bare mpv's (for a closer look).
        public var flips: [[FrameFlipProbe.Flip]] = []
        /// Each peer's `statistics` event line (nudges, starts and the rest).
        public var statistics: [String] = []

        /// The peers' summary.
        public var peers: Percentiles? { Percentiles(peerSpreads) }
        /// The floor's summary.
        public var floor: Percentiles? { Percentiles(floorSpreads) }

        /// The targets: p95 ≤ max(2.5 ms, the floor's p95 + 0.5 ms), p99 ≤ the floor's p99 + 2 ms.
        public var meetsTargets: Bool? {
            guard let peers, let floor else { return nil }
            return peers.p95 <= max(2.5, floor.p95 + 0.5) && peers.p99 <= floor.p99 + 2
        }

        /// A Markdown table of the two, and the targets.
        public var table: String {
            func row(_ name: String, _ summary: Percentiles?) -> String {
                guard let summary else { return "| \(name) | no frames | | | | |" }
                return "| \(name) | \(summary.count) | " + [summary.p50, summary.p95, summary.p99, summary.max]
                    .map { String(format: "%.2f", $0) }.joined(separator: " | ") + " |"
            }
            var lines = ["| \(mode), \(peerFlips.count) vs \(floorFlips.count) | frames | p50 ms | p95 ms | p99 ms | max ms |",
                         "|---|---|---|---|---|---|",
                         row("`--player mpv` peers", peers), row("floor (bare mpv)", floor)]
            if !defaultFloorSpreads.isEmpty { lines.append(row("bare mpv, mpv's defaults (rendering ahead)", Percentiles(defaultFloorSpreads))) }
            if let floor {
                lines.append("targets: p95 ≤ \(String(format: "%.2f", max(2.5, floor.p95 + 0.5))) ms, p99 ≤ \(String(format: "%.2f", floor.p99 + 2)) ms: "
                             + (meetsTargets == true ? "met" : "not met"))
            }
            return lines.joined(separator: "\n")
        }
    }

    /// Why a run failed.
    public struct RunError: Error, CustomStringConvertible {
        /// What went wrong, in a sentence.
        public let description: String
    }

    /// Runs the floor, then the peers, and returns both.
    public static func run(_ configuration: Configuration) async throws -> Report {
        try FileManager.default.createDirectory(atPath: configuration.directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: configuration.directory) }
        let floor = try measureFloor(configuration, arguments: configuration.floorMatchesTandem ? MpvProcess.displayTimeArguments : [])
        let defaultFloor = configuration.measuresDefaultFloor ? try measureFloor(configuration, arguments: []) : []
        let (peers, largest, statistics) = try await measurePeers(configuration)
        let mode = configuration.mpvArguments.contains("--vo=null") ? "headless" : "drawing (\(configuration.mpvArguments))"
        return Report(peerSpreads: FrameFlipAnalysis.spreads(peers), floorSpreads: FrameFlipAnalysis.spreads(floor),
                      defaultFloorSpreads: FrameFlipAnalysis.spreads(defaultFloor),
                      peerFlips: peers.map(\.count), floorFlips: floor.map(\.count), largest: largest, mode: mode,
                      flips: peers + floor, statistics: statistics)
    }

    /// Bare mpv on the clip with `arguments` besides `mpvArguments`, paused, then unpaused
    /// together (back to back) and left alone for `floorSeconds`; each one's flips. It blocks
    /// the calling thread for as long.
    static func measureFloor(_ configuration: Configuration, arguments: [String]) throws -> [[FrameFlipProbe.Flip]] {
        let sockets = (0..<configuration.peers).map { "\(configuration.directory)/floor-\($0).sock" }
        var processes: [Process] = []
        defer {
            // mpv inherits this process's signal mask, in which a test runner may block SIGTERM:
            // asked to quit over its IPC, then killed.
            for socket in sockets { _ = try? FrameFlipProbe.send(["quit"], to: socket) }
            let deadline = Date().addingTimeInterval(1)
            while processes.contains(where: \.isRunning), Date() < deadline { usleep(10_000) }
            for process in processes where process.isRunning { kill(process.processIdentifier, SIGKILL) }
            for process in processes { process.waitUntilExit() }
        }
        for socket in sockets {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/mpv")
            process.arguments = ["--idle=no", "--input-ipc-server=\(socket)", "--pause", "--keep-open=yes", "--no-config"] + arguments
                + configuration.mpvArguments.split(separator: " ").map(String.init) + ["--", configuration.clip]
            var environment = ProcessInfo.processInfo.environment
            for (name, value) in configuration.environment { environment[name] = value }
            process.environment = environment
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            processes.append(process)
        }
        for socket in sockets { try waitForPosition(socket) }
        let probe = try FrameFlipProbe(sockets: sockets, pollGap: configuration.pollGap)
        probe.start()
        Thread.sleep(forTimeInterval: 0.3)
        for socket in sockets { try FrameFlipProbe.send(FrameFlipBenchmark.Action.resume.command, to: socket) }
        Thread.sleep(forTimeInterval: configuration.floorSeconds)
        return probe.stop()
    }

    /// The peers over the script; the flips, and the largest spreads placed in the script.
    static func measurePeers(_ configuration: Configuration) async throws
        -> ([[FrameFlipProbe.Flip]], [(seconds: Double, spread: Double, after: String)], [String]) {
        let settings = (0..<configuration.peers).map {
            WatchProcess.MpvSettings(socket: "\(configuration.directory)/peer-\($0).sock", arguments: configuration.mpvArguments)
        }
        let host = try WatchProcess.host(media: [configuration.clip], mpv: settings[0], arguments: configuration.peerArguments,
                                         environment: configuration.environment, executable: configuration.executable)
        var processes = [host]
        defer {
            for process in processes { process.kill() }
        }
        guard let invite = host.invite() else { throw RunError(description: "the host printed no invite: \(host.standardError)") }
        for index in 1..<max(1, configuration.peers) {
            processes.append(try WatchProcess.join(invite: invite, media: [configuration.clip], name: "peer\(index)", mpv: settings[index],
                                                   arguments: configuration.peerArguments, environment: configuration.environment,
                                                   executable: configuration.executable))
        }
        for process in processes where !process.waitUntilJoined() {
            throw RunError(description: "\(process.name) did not join: \(process.standardError)")
        }
        for setting in settings { try waitForPosition(setting.socket) }
        let probe = try FrameFlipProbe(sockets: settings.map(\.socket), pollGap: configuration.pollGap)
        probe.start()
        try await Task.sleep(for: .milliseconds(500))
        var steps: [(at: Int64, name: String)] = []
        let began = HostInstant.now().nanoseconds
        for step in configuration.script {
            let at = try FrameFlipProbe.send(step.action.command, to: settings[step.peer % settings.count].socket)
            steps.append((at, "\(step.action) in peer \(step.peer)"))
            try await Task.sleep(for: .seconds(step.then))
        }
        let flips = probe.stop()
        _ = host.send("end")
        host.closeInput()
        for process in processes { _ = process.waitForExit(timeout: 10) }
        let largest = FrameFlipAnalysis.timedSpreads(flips).sorted { $0.spread > $1.spread }.prefix(12).map { entry in
            (seconds: Double(entry.at - began) / 1e9, spread: entry.spread,
             after: steps.last { $0.at <= entry.at }.map { "\($0.name) \(String(format: "%.2f", Double(entry.at - $0.at) / 1e9)) s before" } ?? "start")
        }
        let statistics = processes.compactMap { $0.lines.last { $0.contains(#""event":"statistics""#) } }
        return (flips, largest, statistics)
    }

    /// Waits (at most 20 s) until the mpv at `socket` listens and has a position.
    static func waitForPosition(_ socket: String) throws {
        // Bounded: 400 steps of 50 ms.
        for _ in 0..<400 {
            if FrameFlipProbe.position(at: socket) != nil { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw RunError(description: "no mpv with a position at \(socket) within 20 s")
    }
}
