#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TandemMpv

/// `tandem bench all`: every scenario, each run twice in one sitting — once by the baseline that
/// acts on receipt, once by the coordinator — so that every figure has its reference beside it.
///
/// Every peer is a `tandem` process on this host with its own injected clock offset and drift;
/// impaired paths go through the user-space impairment proxy. A run is bounded: each scenario's
/// script lasts at most about 20 s, and any process still running at its end is killed.
public struct BenchmarkSuite: Sendable {
    /// The scenarios to run, in order.
    public var scenarios: [Scenario]
    /// Whether these are the short versions (`--quick`).
    public var quick: Bool
    /// The clip every peer plays (at least 20 s long).
    public var clip: String
    /// The `tandem` executable to run as each peer.
    public var executable: String
    /// The modes to run each scenario in, the baseline first.
    public var modes: [SyncMode] = [.onReceipt, .coordinator]
    /// Where to keep what every peer wrote (`--keep-logs DIR`): its presentation log, and its
    /// standard output and error with the instant each line was read; nil keeps nothing.
    public var logs: String? = nil

    /// A suite of `scenarios` run by `executable` on `clip`.
    public init(scenarios: [Scenario], quick: Bool, clip: String, executable: String) {
        self.scenarios = scenarios
        self.quick = quick
        self.clip = clip
        self.executable = executable
    }

    /// Runs every scenario in every mode; `progress` hears what is happening, a line at a time.
    /// A run that fails is reported with its error and the suite goes on.
    public func run(progress: (String) -> Void = { _ in }) throws -> SuiteReport {
        let started = Date()
        let directory = logs.map { URL(fileURLWithPath: $0, isDirectory: true) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("tandem-bench-all-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { if logs == nil { try? FileManager.default.removeItem(at: directory) } }
        var results: [ScenarioResult] = []
        for scenario in scenarios {
            var runs: [ModeResult] = []
            let floor = scenario.player == .mpv ? mpvFloor(scenario, directory: directory.path, progress: progress) : nil
            for mode in modes {
                progress("\(scenario.name), \(mode.title)")
                runs.append(runOnce(scenario, mode: mode, floor: floor, directory: directory.path, progress: progress))
            }
            results.append(ScenarioResult(name: scenario.name, summary: scenario.summary, peers: scenario.peers,
                                          player: scenario.player.rawValue, network: scenario.network, runs: runs))
        }
        return SuiteReport(date: ISO8601DateFormatter().string(from: started), machine: BenchmarkSuite.machine(), quick: quick,
                           seconds: Date().timeIntervalSince(started), scenarios: results)
    }

    /// A mode's result; with mpv, the frame-flip probe's spread beside the sitting's `floor`.
    private func runOnce(_ scenario: Scenario, mode: SyncMode, floor: Percentiles?, directory: String,
                         progress: (String) -> Void) -> ModeResult {
        do {
            let outcome = try measure(scenario, mode: mode, directory: directory, progress: progress)
            var result = try ScenarioAnalysis.result(outcome, scenario: scenario, mode: mode)
            if let flips = outcome.flips.flatMap({ Percentiles(FrameFlipAnalysis.spreads($0)) }) {
                result.frameFlips = FrameFlipFigures(spread: flips, floor: floor)
            }
            return result
        } catch {
            return ModeResult(mode: mode, spread: nil, clockError: nil, commandToEffect: nil, convergence: nil,
                              convergenceEvents: 0, notConverged: 0, framesPresented: 0, framesDropped: 0, peers: [],
                              spreadSeries: [], clockErrorSeries: [], errors: ["\(error)"])
        }
    }

    /// The frame-flip floor of an mpv scenario: as many bare mpv as it has peers, with the
    /// options `tandem` gives mpv, unpaused together on the clip and left alone (3 s quick, 6 s
    /// else); nil, said in `progress`, when it could not be measured.
    private func mpvFloor(_ scenario: Scenario, directory: String, progress: (String) -> Void) -> Percentiles? {
        progress("\(scenario.name), the floor: \(scenario.peers) bare mpv")
        var configuration = FrameFlipBenchmark.Configuration(clip: clip)
        configuration.peers = scenario.peers
        configuration.floorSeconds = quick ? 3 : 6
        configuration.directory = directory + "/\(scenario.name)-floor"
        do {
            try FileManager.default.createDirectory(atPath: configuration.directory, withIntermediateDirectories: true)
            return Percentiles(FrameFlipAnalysis.spreads(try FrameFlipBenchmark.measureFloor(configuration, arguments: MpvProcess.displayTimeArguments)))
        } catch {
            progress("  the floor could not be measured: \(error)")
            return nil
        }
    }

    /// Runs `scenario` once in `mode`, its logs in `directory`, and returns what it produced
    /// (`tandem bench sync` reads its own figures off it).
    func measure(_ scenario: Scenario, mode: SyncMode, directory: String, progress: (String) -> Void) throws -> ScenarioRun.Outcome {
        var run = ScenarioRun(scenario: scenario, mode: mode, executable: executable, clip: clip, directory: directory)
        run.keepsTranscripts = logs != nil
        if scenario.queueItems > 0 {
            run.queue = try BenchmarkSuite.queueClips(scenario, directory: directory)
        }
        // Over a jittery path the clock estimate needs about 8 s to come within a millisecond
        // (`tandem bench clock`): the script starts once it has, as a session plays for longer
        // than its first seconds. How quickly a joiner comes in is measured by convergence. The
        // quick suite, a check rather than a measurement, gives it half that, and a loopback
        // path, whose estimate settles within its first probes, a second.
        run.settle = scenario.impairments.values.contains { $0.jitter > 0 } ? (quick ? 4 : 8) : (quick ? 1 : 2)
        defer { run.tearDown() }
        return try run.run { progress("  \($0)") }
    }

    /// The short clips of `scenario`'s queue, made in `directory` once (`queue-1.mp4`…).
    static func queueClips(_ scenario: Scenario, directory: String) throws -> [String] {
        try (1...scenario.queueItems).map { number in
            let path = directory + "/queue-\(number)-\(scenario.queueClipSeconds)s.mp4"
            if !FileManager.default.fileExists(atPath: path) {
                try BenchmarkClip(seconds: scenario.queueClipSeconds).make(at: path)
            }
            return path
        }
    }

    /// This machine in one line: kernel, processors, memory.
    static func machine() -> String {
        var name = utsname()
        uname(&name)
        let kernel = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let architecture = withUnsafeBytes(of: &name.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let memory = Double(ProcessInfo.processInfo.physicalMemory) / 1_073_741_824
        let model = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("model name") }
            .flatMap { $0.split(separator: ":", maxSplits: 1).last?.trimmingCharacters(in: .whitespaces) }
        return "Linux \(kernel) \(architecture), \(ProcessInfo.processInfo.activeProcessorCount) cores"
            + (model.map { " (\($0))" } ?? "") + String(format: ", %.0f GiB", memory)
    }
}
