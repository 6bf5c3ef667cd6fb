#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import TandemClock

/// A real PulseAudio server (Debian's `pulseaudio`) run as a process of its own for a test or a
/// benchmark: in a runtime directory of its own, answering on one UNIX socket with anonymous
/// authentication, loading nothing but that protocol, so that it plays into null sinks on a
/// machine with no sound card and never touches a desktop's server.
///
/// Its main thread runs at a real-time priority where the process may have one (as root, or with
/// an `rtprio` limit): a PulseAudio server moves every client's sound through its main thread
/// (the native protocol's requests and data), which the server itself only renices, while its
/// sinks' threads are real-time; on a busy machine that thread, starved, runs every client dry
/// at once. A desktop's sound server (PipeWire) moves clients' sound on a real-time thread.
///
/// `start()` waits (bounded) until `pactl info` answers; `stop()` (and `deinit`, should a test
/// end early) ends the process and removes its directory. Give a child process `environment`, or a
/// libpulse client `serverString`, so that it plays into this server and no other.
///
/// ```swift
/// let server = try PulseAudioServer.start()
/// defer { server.stop() }
/// try server.loadNullSink(name: "mix", channels: 2, rate: 48_000, channelMap: ["aux0", "aux1"])
/// try server.loadRemapSink(name: "p0", master: "mix", channels: 1, channelMap: ["mono"], masterChannelMap: ["aux0"])
/// let recording = try server.record(source: "mix.monitor", channels: 2, channelMap: ["aux0", "aux1"], to: path)
/// ```
public final class PulseAudioServer: Sendable {
    /// The directory holding the runtime directory, the home directory, the script and the log.
    public let directory: URL
    /// The path of the server's native-protocol socket.
    public let socketPath: String
    private let process: SpawnedProcess
    /// Whether the server's main thread runs at a real-time priority (false where the process
    /// may not have one, or once the server has ended).
    public var realtime: Bool {
        let policy = sched_getscheduler(process.processIdentifier)
        return policy == SCHED_RR || policy == SCHED_FIFO
    }

    /// The server's address as libpulse reads it (`unix:PATH`), for `PULSE_SERVER` or a
    /// client's explicit server.
    public var serverString: String { "unix:\(socketPath)" }

    /// The environment a child process needs to play into this server (and to start none of its
    /// own): `PULSE_SERVER`, `PULSE_RUNTIME_PATH` and a `HOME` of the server's own, so that no
    /// user configuration or cookie is read.
    public var environment: [String: String] {
        ["PULSE_SERVER": serverString,
         "PULSE_RUNTIME_PATH": directory.appendingPathComponent("run").path,
         "HOME": directory.appendingPathComponent("home").path]
    }

    /// Where Debian installs the server.
    public static let executable = "/usr/bin/pulseaudio"
    /// Where Debian installs the control and recording tools (`pulseaudio-utils`).
    public static let tools = (pactl: "/usr/bin/pactl", parec: "/usr/bin/parec", pacat: "/usr/bin/pacat")

    /// Whether the server and its tools are installed (`scripts/install-deps` installs them).
    public static var isInstalled: Bool {
        [executable, tools.pactl, tools.parec].allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
    }

    private init(directory: URL, socketPath: String, process: SpawnedProcess) {
        self.directory = directory
        self.socketPath = socketPath
        self.process = process
    }

    /// Starts a server in a new directory under the temporary directory, and waits at most
    /// `timeout` seconds until it answers.
    public static func start(timeout: Double = 10) throws -> PulseAudioServer {
        guard isInstalled else {
            throw FixtureError("\(executable) or pulseaudio-utils is not installed (scripts/install-deps installs them)")
        }
        // A short path: a UNIX socket's path is limited to 107 bytes.
        let directory = URL(fileURLWithPath: "/tmp/tandem-pulse-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        let fileManager = FileManager.default
        for sub in ["run", "home"] {
            try fileManager.createDirectory(at: directory.appendingPathComponent(sub), withIntermediateDirectories: true)
        }
        let socketPath = directory.appendingPathComponent("run/native").path
        let script = directory.appendingPathComponent("server.pa")
        try "load-module module-native-protocol-unix auth-anonymous=1 socket=\(socketPath)\n"
            .write(to: script, atomically: true, encoding: .utf8)
        // -n: no default script; the idle exit and autospawn are off, so the server lives
        // exactly as long as this object.
        let arguments = [executable, "-n", "-F", script.path, "--daemonize=no", "--exit-idle-time=-1", "--use-pid-file=no",
                         "--system=no", "--log-target=file:\(directory.appendingPathComponent("server.log").path)"]
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = directory.appendingPathComponent("home").path
        environment["XDG_RUNTIME_DIR"] = directory.appendingPathComponent("run").path
        environment["PULSE_RUNTIME_PATH"] = directory.appendingPathComponent("run").path
        environment.removeValue(forKey: "PULSE_SERVER")
        environment.removeValue(forKey: "DBUS_SESSION_BUS_ADDRESS")
        let process = try SpawnedProcess(arguments, environment: environment)
        let server = PulseAudioServer(directory: directory, socketPath: socketPath, process: process)
        let deadline = Date().addingTimeInterval(timeout)
        // Bounded by the deadline: every 20 ms until the socket answers.
        while Date() < deadline, process.isRunning {
            if fileManager.fileExists(atPath: socketPath), (try? server.pactl(["info"])) != nil {
                // Once it answers, its start-up (which sets its own scheduling) is over. The
                // threads its modules start later inherit this, and set their own.
                var limit = rlimit()
                getrlimit(__rlimit_resource_t(__RLIMIT_RTPRIO.rawValue), &limit)
                if let priority = SoundServerPriority.mainThread(effectiveUser: geteuid(), realtimeLimit: limit.rlim_cur) {
                    var parameters = sched_param(sched_priority: priority)
                    _ = sched_setscheduler(process.processIdentifier, SCHED_RR, &parameters)
                }
                return server
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        let log = (try? String(contentsOf: directory.appendingPathComponent("server.log"), encoding: .utf8)) ?? ""
        server.stop()
        throw FixtureError("pulseaudio did not answer within \(timeout) s: \(log.split(separator: "\n").suffix(3).joined(separator: " | "))")
    }

    deinit { stop() }

    /// Stops the server (SIGTERM, then SIGKILL after 2 s), reaps it and removes its directory.
    public func stop() {
        process.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs `pactl` against this server with `arguments` and returns what it printed; throws
    /// with its error output when it fails.
    @discardableResult
    public func pactl(_ arguments: [String]) throws -> String {
        let result = try run(PulseAudioServer.tools.pactl, arguments)
        guard result.status == 0 else {
            throw FixtureError("pactl \(arguments.joined(separator: " ")): \(result.error.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        return result.output
    }

    /// Loads a null sink: a sink that plays into nothing, on the server's own timer, whose
    /// monitor source records what was played into it. Returns the module's index.
    @discardableResult
    public func loadNullSink(name: String, channels: Int, rate: Int = 48_000, channelMap: [String]) throws -> Int {
        try loadModule("module-null-sink", ["sink_name=\(name)", "channels=\(channels)", "rate=\(rate)",
                                            "channel_map=\(channelMap.joined(separator: ","))", "format=s16le"])
    }

    /// Loads a remap sink `name` that plays its `channelMap` onto `masterChannelMap` of the sink
    /// `master`, unmixed (one participant's sound onto a channel of its own). Returns the
    /// module's index.
    @discardableResult
    public func loadRemapSink(name: String, master: String, channels: Int, channelMap: [String], masterChannelMap: [String]) throws -> Int {
        try loadModule("module-remap-sink", ["sink_name=\(name)", "master=\(master)", "channels=\(channels)",
                                             "channel_map=\(channelMap.joined(separator: ","))",
                                             "master_channel_map=\(masterChannelMap.joined(separator: ","))", "remix=no"])
    }

    private func loadModule(_ module: String, _ arguments: [String]) throws -> Int {
        let answer = try pactl(["load-module", module] + arguments).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let index = Int(answer) else { throw FixtureError("pactl load-module \(module) answered \(answer)") }
        return index
    }

    /// Records `source` (a sink's monitor is `SINK.monitor`) with `parec` as raw signed 16-bit
    /// little-endian samples at 48 kHz into `path`, with the channel map named explicitly (else
    /// the server remixes channels the recording does not name, and aux channels are lost).
    public func record(source: String, channels: Int, channelMap: [String], to path: String) throws -> PulseAudioRecording {
        let arguments = [PulseAudioServer.tools.parec, "--device=\(source)", "--raw", "--format=s16le", "--rate=48000",
                         "--channels=\(channels)", "--channel-map=\(channelMap.joined(separator: ","))", "--latency-msec=10"]
        let started = LocalInstant(nanoseconds: SystemClock().instant().nanoseconds)
        let process = try SpawnedProcess(arguments, environment: childEnvironment, output: path)
        return PulseAudioRecording(process: process, path: path, started: started)
    }

    /// Plays `path`, raw signed 16-bit little-endian samples at 48 kHz in `channels` channels,
    /// into `sink` with `pacat`, to the end (a short latency asked, so that its drain at the end
    /// does not wait out the sink's default buffer).
    public func play(raw path: String, channels: Int, into sink: String) throws {
        let result = try run(PulseAudioServer.tools.pacat, ["--playback", "--raw", "--format=s16le", "--rate=48000", "--channels=\(channels)",
                                                            "--latency-msec=20", "--device=\(sink)", path])
        guard result.status == 0 else { throw FixtureError("pacat into \(sink): \(result.error.trimmingCharacters(in: .whitespacesAndNewlines))") }
    }

    /// This process's environment with `environment` over it.
    private var childEnvironment: [String: String] {
        ProcessInfo.processInfo.environment.merging(environment) { _, own in own }
    }

    /// Runs `executable` with `arguments` and this server's environment, waiting at most
    /// `timeout` seconds (then it is killed and counts as failed).
    private func run(_ executable: String, _ arguments: [String], timeout: Double = 10) throws -> (status: Int32, output: String, error: String) {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("pulse-tool-\(UUID().uuidString)").path
        let (outputPath, errorPath) = (base + ".out", base + ".err")
        defer { for path in [outputPath, errorPath] { try? FileManager.default.removeItem(atPath: path) } }
        let process = try SpawnedProcess([executable] + arguments, environment: childEnvironment, output: outputPath, error: errorPath)
        let status = process.wait(timeout: timeout) ?? -9
        let read = { (path: String) in (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
        return (status, read(outputPath), read(errorPath))
    }
}

/// A `parec` recording in progress: raw s16le samples, interleaved in the channel map it was
/// started with, written to `path` until `stop()`.
public final class PulseAudioRecording: Sendable {
    /// The file the samples go to.
    public let path: String
    /// The local monotonic instant just before `parec` was started (its first sample was
    /// recorded some milliseconds later: the process's start and the stream's latency).
    public let started: LocalInstant
    private let process: SpawnedProcess

    init(process: SpawnedProcess, path: String, started: LocalInstant) {
        self.process = process
        self.path = path
        self.started = started
    }

    deinit { process.stop() }

    /// Ends the recording (SIGINT, as a person stopping `parec` would; SIGKILL after 2 s) and
    /// returns the bytes recorded.
    @discardableResult
    public func stop() -> Int {
        process.stop(signal: SIGINT)
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
        return size ?? 0
    }
}
