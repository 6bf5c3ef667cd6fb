#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import TandemClock

/// A PulseAudio server of the bench's own: `pulseaudio` run as a child process with a runtime
/// directory, a socket and a home of its own (no desktop session, no default configuration, no
/// autospawn), driven with `pactl`, recorded with `parec`, and stopped (its directory removed)
/// by `stop()` or deinit.
public final class AudioPulseServer: @unchecked Sendable {
    /// The directory holding its socket, runtime files, home and log.
    public let directory: String
    /// `unix:<socket>`, for `PULSE_SERVER`.
    public var serverString: String { "unix:" + directory + "/native" }
    /// The variables a client of this server runs with: `PULSE_SERVER`, `PULSE_RUNTIME_PATH` and
    /// `HOME` (so that no client reads or writes the user's own configuration).
    public var environment: [String: String] {
        ["PULSE_SERVER": serverString, "PULSE_RUNTIME_PATH": directory + "/runtime", "HOME": directory + "/home"]
    }

    private var process: AudioChildProcess?

    private init(directory: String) {
        self.directory = directory
    }

    /// Starts a server and waits (at most `timeout` seconds) until `pactl info` reaches it.
    public static func start(timeout: Double = 15) throws -> AudioPulseServer {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tandem-pulse-\(UUID().uuidString.prefix(8))").path
        for folder in ["runtime", "home"] {
            try FileManager.default.createDirectory(atPath: directory + "/" + folder, withIntermediateDirectories: true)
        }
        let server = AudioPulseServer(directory: directory)
        guard let executable = AudioPulseServer.find("pulseaudio") else {
            try? FileManager.default.removeItem(atPath: directory)
            throw BenchmarkError("pulseaudio is not installed (scripts/install-deps installs pulseaudio and pulseaudio-utils)")
        }
        do {
            server.process = try AudioChildProcess(
                executable: executable,
                arguments: ["-n", "--daemonize=no", "--exit-idle-time=-1", "--use-pid-file=false", "--system=false",
                            "--log-target=file:\(directory)/pulseaudio.log",
                            "-L", "module-native-protocol-unix socket=\(directory)/native auth-anonymous=1"],
                environment: ["PULSE_RUNTIME_PATH": directory + "/runtime", "HOME": directory + "/home"])
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw BenchmarkError("cannot start pulseaudio: \(error)")
        }
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if (try? server.pactl(["info"])) != nil { return server }
            guard server.process?.isRunning == true else { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        let log = (try? String(contentsOfFile: directory + "/pulseaudio.log", encoding: .utf8))?.split(separator: "\n").last ?? ""
        server.stop()
        throw BenchmarkError("pulseaudio did not answer within \(Int(timeout)) s: \(log)")
    }

    deinit { stop() }

    /// Stops the server (SIGTERM, then SIGKILL after 3 s) and removes its directory.
    public func stop() {
        process?.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Runs `pactl ARGUMENTS` against this server (at most 10 s) and returns what it printed.
    @discardableResult
    public func pactl(_ arguments: [String]) throws -> String {
        guard let pactl = AudioPulseServer.find("pactl") else { throw BenchmarkError("pactl is not installed (scripts/install-deps installs pulseaudio-utils)") }
        let result = try AudioChildProcess.run(pactl, arguments, environment: environment, timeout: 10)
        guard result.status == 0 else {
            throw BenchmarkError("pactl \(arguments.joined(separator: " ")) failed: \(result.errors.split(separator: "\n").last ?? "")")
        }
        return result.output
    }

    /// Loads a null sink `name` of `channels` channels at `rate` Hz with `channelMap`
    /// (comma-separated names: `aux0,aux1,…`).
    public func loadNullSink(name: String, channels: Int, rate: Int, channelMap: String) throws {
        try pactl(["load-module", "module-null-sink", "sink_name=\(name)", "channels=\(channels)", "rate=\(rate)",
                   "format=s16le", "channel_map=\(channelMap)"])
    }

    /// Loads a remap sink `name` onto `master`: its `channels` channels (`channelMap`) go, unmixed,
    /// to the master's channels `masterChannelMap`.
    public func loadRemapSink(name: String, master: String, channels: Int, channelMap: String, masterChannelMap: String) throws {
        try pactl(["load-module", "module-remap-sink", "sink_name=\(name)", "master=\(master)", "channels=\(channels)",
                   "channel_map=\(channelMap)", "master_channel_map=\(masterChannelMap)", "remix=no"])
    }

    /// Records `source` as raw 16-bit little-endian samples of `channels` channels (`channelMap`
    /// named explicitly: without it the server remixes the channels to its default map) into
    /// `path`, with `parec`.
    public func record(source: String, channels: Int, channelMap: String, to path: String) throws -> AudioPulseRecording {
        try AudioPulseRecording(server: self, source: source, channels: channels, channelMap: channelMap, path: path)
    }

    /// The full path of `command` on the PATH, or nil.
    static func find(_ command: String) -> String? {
        if command.contains("/") { return FileManager.default.isExecutableFile(atPath: command) ? command : nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(command)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}

/// A `parec` recording under way into a file, with the file's growth watched against the
/// machine's monotonic clock: frame `n` was in the file by the first instant the file held it,
/// which bounds from above when the sink rendered it (`placement`).
public final class AudioPulseRecording: @unchecked Sendable {
    /// The raw file.
    public let path: String
    /// Channels per frame.
    public let channels: Int
    private var process: AudioChildProcess?
    private let watch = Watch()
    private let watcher = DispatchGroup()

    /// The file's growth and whether to go on watching it, shared with the watching thread.
    private final class Watch: Sendable {
        let growth = Mutex<[(instant: Int64, frames: Int)]>([])
        let watching = Mutex(true)
    }

    init(server: AudioPulseServer, source: String, channels: Int, channelMap: String, path: String) throws {
        self.path = path
        self.channels = channels
        guard let executable = AudioPulseServer.find("parec") else {
            throw BenchmarkError("parec is not installed (scripts/install-deps installs pulseaudio-utils)")
        }
        let file = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard file >= 0 else { throw BenchmarkError("cannot write the recording \(path): \(String(cString: strerror(errno)))") }
        defer { close(file) }
        process = try AudioChildProcess(
            executable: executable,
            arguments: ["--device=\(source)", "--raw", "--format=s16le", "--rate=\(AudioBenchSignal.sampleRate)",
                        "--channels=\(channels)", "--channel-map=\(channelMap)", "--latency-msec=5"],
            environment: server.environment, output: file)
        let bytesPerFrame = channels * 2
        DispatchQueue.global().async(group: watcher) { [watch, path] in
            let clock = SystemClock()
            var last = -1
            while watch.watching.withLock({ $0 }) {
                let size = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
                let frames = size / bytesPerFrame
                if frames != last {
                    let instant = clock.now()
                    watch.growth.withLock { $0.append((instant, frames)) }
                    last = frames
                }
                usleep(1_000)
            }
        }
    }

    deinit { stop() }

    /// Frames recorded so far.
    public var frames: Int { watch.growth.withLock { $0.last?.frames ?? 0 } }

    /// Waits at most `timeout` seconds until the file grows by `frames` frames; whether it did.
    public func waitUntilFlowing(frames wanted: Int = 2_400, timeout: Double = 10) -> Bool {
        let start = frames
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if frames - start >= wanted { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return false
    }

    /// The earliest the recording's frame 0 can have been rendered by the sink, on the monotonic
    /// clock (ns): the least, over the file's growth, of the instant it was seen less the
    /// duration of the frames it held by then; nil before anything was recorded.
    public var placement: Int64? {
        watch.growth.withLock { samples in
            samples.filter { $0.frames > 0 }.map { $0.instant - Int64(Double($0.frames) * 1e9 / Double(AudioBenchSignal.sampleRate)) }.min()
        }
    }

    /// Stops `parec` and the watch of the file.
    public func stop() {
        process?.stop()
        watch.watching.withLock { $0 = false }
        _ = watcher.wait(timeout: .now() + 2)
    }

    /// The recording, one array of samples (full scale 1) per channel.
    public func channelSamples() throws -> [[Float]] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let frames = data.count / (channels * 2)
        var result = [[Float]](repeating: [Float](repeating: 0, count: frames), count: channels)
        data.withUnsafeBytes { raw in
            for frame in 0..<frames {
                for channel in 0..<channels {
                    let offset = (frame * channels + channel) * 2
                    let value = Int16(bitPattern: UInt16(raw[offset]) | UInt16(raw[offset + 1]) << 8)
                    result[channel][frame] = Float(value) / 32768
                }
            }
        }
        return result
    }
}
