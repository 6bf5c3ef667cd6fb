#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TandemMediaTypes
import TandemClock
import TandemHarness

/// `tandem bench audio`: participants' sound measured at the output. The bench starts a
/// PulseAudio server of its own with one multichannel null sink at 48 kHz (an `auxN` channel per
/// participant) and a mono remap sink per participant onto its channel; every participant is its
/// own `tandem` process with an injected clock offset and drift, on a `tandem serve` whose
/// session clock drifts against the machine's, and plays into its own remap sink. One recording
/// of the sink's monitor (`AudioMonitorRecorder`) holds them all on one clock, placed on the
/// machine's by the sound server's timing reports. The host follows a script of play,
/// pause, seek, rate changes and an item change; the analysis (`AudioSpreadAnalysis`) reads
/// the spread of each group and each built-in player's own error.
///
/// In one run: three built-in players following the timeline, two mpv players (`--ao=pulse`),
/// and two built-in players applying changes on receipt (the baseline), each group its own row.
public struct AudioBenchmark: Sendable {
    /// A group of participants.
    public enum Kind: String, Sendable, CaseIterable {
        /// The built-in player, following the timeline (`--follow scheduled`).
        case tandem
        /// mpv, corrected through its IPC.
        case mpv
        /// The built-in player, applying changes on receipt (`--follow on-receipt`).
        case onReceipt = "on-receipt"

        var summary: String {
            switch self {
            case .tandem: "built-in player, each sample at the timeline's instant"
            case .mpv: "mpv --ao=pulse, corrected through its IPC"
            case .onReceipt: "built-in player applying each change on receipt (the baseline)"
            }
        }
    }

    /// The `tandem` executable to run as every participant and the relay.
    public var executable: String
    /// How many of each kind take part, in this order (the first built-in player hosts).
    public var members: [(kind: Kind, count: Int)] = [(.tandem, 3), (.mpv, 2), (.onReceipt, 2)]
    /// The relay's session clock drift against the machine's, ppm.
    public var relayDriftPPM = 100.0
    /// Seconds of steady play added after the first play (the script lasts about 40 s more).
    public var steadySeconds = 20.0
    /// The null sink's rate. A null sink keeps time by adding up the durations of the blocks it
    /// renders, each rounded down to the microsecond; at 48 kHz most blocks last a fraction of a
    /// microsecond more than it counts, and the sink runs tens to hundreds of ppm fast, by an
    /// amount that changes with the block sizes its streams make. At 50 kHz every frame lasts
    /// 20 µs exactly, so the sink keeps the machine's time: the participants' 48 kHz streams are
    /// resampled into it, and the recording back to 48 kHz, the same way for every channel.
    public static let sinkRate = 50_000

    /// More mpv options for the mpv participants, after the bench's own.
    public var mpvArguments = ""
    /// Where to keep the recording, the media and every log; nil keeps nothing.
    public var logs: String?

    /// A benchmark run by `executable`.
    public init(executable: String) {
        self.executable = executable
    }

    /// The host's script: each command, then how long to let it play (seconds).
    func script() -> [(command: String, hold: Double)] {
        [("play", 5 + steadySeconds), ("pause", 1.5), ("play", 4), ("seek 12", 4), ("rate 1.5", 4), ("rate 0.75", 3),
         ("rate 1", 4), ("next", 5), ("pause", 0.5)]
    }

    /// The media's two items: (file name, seconds, seed).
    func items() -> [(name: String, seconds: Double, seed: UInt64)] {
        [("audio-a.mkv", 32 + steadySeconds, 11), ("audio-b.mkv", 12, 23)]
    }

    /// Runs the session and measures it; `progress` hears what is happening, a line at a time.
    public func run(progress: (String) -> Void = { _ in }) throws -> AudioBenchmarkReport {
        let started = Date()
        let directory = logs.map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("tandem-bench-audio-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { if logs == nil { try? FileManager.default.removeItem(at: directory) } }
        var errors: [String] = []

        let builtinSound = AudioBenchmark.hasSoundOutput(executable)
        if !builtinSound { progress("this build's built-in player has no sound output (--audio-device): its groups are not measured") }

        progress("making the media: noise with clicks, 48 kHz PCM, beside a small picture")
        var sources: [String: [Float]] = [:]
        var media: [String] = []
        for item in items() {
            let signal = AudioBenchSignal(seconds: item.seconds, seed: item.seed)
            let samples = signal.samples()
            let path = directory.appendingPathComponent(item.name).path
            try signal.writeMedia(to: path, samples: samples)
            sources[item.name] = samples
            media.append(path)
        }

        // Participants: a channel each, those not measurable left out.
        var participants: [(name: String, kind: Kind, channel: Int)] = []
        for (kind, count) in members {
            for _ in 0..<count where kind == .mpv || builtinSound || participants.isEmpty {
                participants.append(("peer-\(participants.count)", kind, participants.count))
            }
        }
        let channels = participants.count

        progress("starting PulseAudio: a \(channels)-channel null sink and a remap sink per participant")
        let server: PulseAudioServer
        do {
            server = try PulseAudioServer.start()
        } catch {
            throw BenchmarkError("cannot start a PulseAudio server (scripts/install-deps installs pulseaudio and pulseaudio-utils): \(error)")
        }
        defer { server.stop() }
        let serverRealtime = server.realtime
        let map = (0..<channels).map { "aux\($0)" }
        _ = try server.loadNullSink(name: "mix", channels: channels, rate: AudioBenchmark.sinkRate, channelMap: map)
        for participant in participants {
            _ = try server.loadRemapSink(name: "p\(participant.channel)", master: "mix", channels: 1, channelMap: ["mono"],
                                         masterChannelMap: ["aux\(participant.channel)"])
        }
        let recordingPath = directory.appendingPathComponent("recording.s16le").path
        let recording = try AudioMonitorRecorder(server: server.serverString, source: "mix.monitor", channels: channels, channelMap: map,
                                                 path: recordingPath)
        defer { recording.stop() }
        guard recording.waitUntilFlowing() else { throw BenchmarkError("the recording of the null sink's monitor did not start within 10 s") }

        // The host's steal time and the load, read through the run, so that an underrun of every
        // output at once can be told from one output's own.
        let activity = HostActivityRecorder()
        var hostActivity: HostActivity?
        defer { if hostActivity == nil { _ = activity.stop() } }

        progress("starting tandem serve with its session clock drifting \(relayDriftPPM) ppm")
        setenv("TANDEM_EXECUTABLE", executable, 1)
        let relayOrigin = SystemClock().instant().nanoseconds
        let relay = try ServeProcess(arguments: ["--session-epoch", "0", "--clock-drift-ppm", "\(relayDriftPPM)"])
        defer { relay.stop() }

        var processes: [WatchProcess] = []
        defer { for process in processes { process.kill() } }
        var environment: [String: String?] = [:]
        for (variable, value) in server.environment { environment[variable] = value }
        func arguments(_ participant: (name: String, kind: Kind, channel: Int)) -> [String] {
            let index = participant.channel
            let base = directory.appendingPathComponent(participant.name).path
            var options = ["--name", participant.name, "--events", "json",
                           "--clock-offset", "\(SyncBenchmark.clockOffsets[index % SyncBenchmark.clockOffsets.count])",
                           "--clock-drift-ppm", "\(SyncBenchmark.clockDrifts[index % SyncBenchmark.clockDrifts.count])"]
            switch participant.kind {
            case .mpv:
                options += ["--follow", "scheduled", "--player", "mpv", "--mpv-ipc", base + ".sock",
                            "--mpv-args", "--vo=null --ao=pulse --audio-device=pulse/p\(index)" + (mpvArguments.isEmpty ? "" : " " + mpvArguments)]
            case .tandem, .onReceipt:
                options += ["--follow", participant.kind == .tandem ? "scheduled" : "on-receipt", "--presentation-log", base + ".jsonl",
                            "--video", "none"]
                options += builtinSound ? ["--audio", "pulse", "--audio-device", "p\(index)", "--audio-log", base + ".audio.jsonl"]
                    : ["--audio", "none"]
            }
            return options
        }
        progress("starting the host and \(participants.count - 1) joiner(s)")
        let host = try WatchProcess(executable: executable,
                                    arguments: ["host"] + media + ["--relay", "127.0.0.1:\(relay.port)"] + arguments(participants[0]),
                                    name: participants[0].name, acceptsCommands: true, environment: environment)
        processes.append(host)
        guard let invite = host.invite(timeout: 20), host.waitUntilJoined(timeout: 20) else {
            throw BenchmarkError("the host printed no invite: \(host.standardError.suffix(300))")
        }
        for participant in participants.dropFirst() {
            var variables = environment
            variables["TANDEM_INVITE"] = invite
            processes.append(try WatchProcess(executable: executable, arguments: ["join"] + media + arguments(participant),
                                              name: participant.name, acceptsCommands: true, environment: variables))
        }
        for process in processes where !process.waitUntilJoined(timeout: 30) {
            throw BenchmarkError("\(process.name) did not join within 30 s: \(process.standardError.suffix(300))")
        }
        Thread.sleep(forTimeInterval: 2)

        let scriptStarted = SystemClock().instant().nanoseconds
        for step in script() {
            progress(step.command)
            if host.send(step.command) == nil { errors.append("cannot write '\(step.command)' to the host") }
            Thread.sleep(forTimeInterval: step.hold)
        }
        let scriptEnded = SystemClock().instant().nanoseconds
        hostActivity = activity.stop()
        host.send("end")
        var statuses: [Int32?] = []
        for process in processes {
            let status = process.waitForExit(timeout: 15)
            if status == nil {
                errors.append("\(process.name) did not exit within 15 s of the end; killed")
                process.kill()
            }
            statuses.append(status)
        }
        recording.stop()
        if self.logs != nil {
            // The server's timing of the recording, a report a line: `frame instant` (monotonic ns).
            let lines = recording.timing.map { "\($0.frame) \($0.instant)\n" }.joined()
            try? lines.write(to: directory.appendingPathComponent("recording-timing.txt"), atomically: true, encoding: .utf8)
        }
        for (process, participant) in zip(processes, participants) {
            errors += process.events.filter { $0.event == "error" }.map { "\(participant.name): \($0.message ?? "error")" }
        }

        progress("reading the recording (\(recording.frames) frames) and the logs")
        let samples = try recording.channelSamples()
        let timeline = AudioTimeline(events: host.events, relayOrigin: relayOrigin, relayDriftPPM: relayDriftPPM)
        // The sink at 50 kHz counts exactly 20 µs a frame on the machine's clock: the recording is
        // placed at that rate, its stretches' origins by the server's reports; the rate the reports
        // alone give is reported beside it, as a check.
        guard let recordingClock = recording.clock(breaks: timeline.changes.map(\.instant), period: 1e9 / Double(AudioBenchSignal.sampleRate)),
              let reportsClock = recording.clock(breaks: timeline.changes.map(\.instant)) else { throw BenchmarkError("nothing was recorded") }
        var logs: [String: AudioOutputLog] = [:]
        var presentations: [String: [PresentationRecord]] = [:]
        if builtinSound {
            for participant in participants where participant.kind != .mpv {
                let path = directory.appendingPathComponent(participant.name + ".audio.jsonl").path
                do { logs[participant.name] = try AudioOutputLog(path: path) } catch { errors.append("\(error)") }
                let pictures = directory.appendingPathComponent(participant.name + ".jsonl").path
                do { presentations[participant.name] = try PresentationRecord.read(path: pictures) } catch { errors.append("\(error)") }
            }
        }
        let input = AudioBenchmarkAnalysis.Input(
            channels: samples, recording: recordingClock, timeline: timeline, scriptStarted: scriptStarted, scriptEnded: scriptEnded,
            groups: Kind.allCases.map { kind in
                (name: kind.rawValue, summary: kind.summary,
                 members: participants.filter { $0.kind == kind }.map { (name: $0.name, channel: $0.channel) },
                 notMeasured: kind != .mpv && !builtinSound ? "this build's built-in player has no sound output" : nil)
            },
            logs: logs, sources: sources, presentations: presentations)
        progress("correlating")
        var report = AudioBenchmarkAnalysis.analyse(input)
        report.recordingClockPPM = reportsClock.ppm(nominalPeriod: 1e9 / Double(AudioBenchSignal.sampleRate))
        report.participants = zip(participants, statuses).map { participant, status in
            var entry = report.participants.first { $0.name == participant.name }
                ?? AudioBenchmarkReport.Participant(name: participant.name, group: participant.kind.rawValue, sink: "p\(participant.channel)",
                                                    clockOffsetSeconds: 0, clockDriftPPM: 0)
            entry.clockOffsetSeconds = SyncBenchmark.clockOffsets[participant.channel % SyncBenchmark.clockOffsets.count]
            entry.clockDriftPPM = SyncBenchmark.clockDrifts[participant.channel % SyncBenchmark.clockDrifts.count]
            entry.exitStatus = status
            return entry
        }
        report.date = ISO8601DateFormatter().string(from: started)
        report.machine = BenchmarkSuite.machine()
        report.seconds = Date().timeIntervalSince(started)
        report.relayDriftPPM = relayDriftPPM
        report.builtinSound = builtinSound
        report.soundServerRealtime = serverRealtime
        report.scriptStartedNanoseconds = scriptStarted
        if let during = hostActivity?.within(scriptStarted, scriptEnded), let load = during.loadRange {
            let underruns = logs.mapValues { log in log.underruns.filter { $0 >= scriptStarted && $0 <= scriptEnded } }
            report.host = AudioBenchmarkReport.Host(stealMilliseconds: during.stealMilliseconds,
                                                    largestStealMilliseconds: during.largestStealMilliseconds,
                                                    loadMinimum: load.lowerBound, loadMaximum: load.upperBound,
                                                    underrunMoments: hostActivity!.underrunMoments(underruns))
        }
        report.errors = errors + report.errors
        if self.logs != nil {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try? encoder.encode(report).write(to: directory.appendingPathComponent("report.json"))
        }
        // The windows one by one are for reading the tail from the kept logs, not for the printed report.
        for index in report.participants.indices { report.participants[index].ownErrorWindows = nil }
        return report
    }

    /// Whether `executable`'s `tandem join` takes `--audio-device` (a build whose built-in player
    /// has a sound output).
    public static func hasSoundOutput(_ executable: String) -> Bool {
        guard let result = try? AudioChildProcess.run(executable, ["join", "--help"], environment: [:], timeout: 20) else { return false }
        return (result.output + result.errors).contains("--audio-device")
    }
}
