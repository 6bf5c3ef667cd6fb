#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TandemBench
import TandemClock
import TandemMedia
import TandemParty
import TandemPlayback

/// The options `tandem host` and `tandem join` share.
struct WatchOptions {
    /// Options with a value that both take.
    static let valueOptions: Set<String> = Set(["name", "video", "presentation-log", "clock-offset", "clock-drift-ppm", "events",
                                            "player", "mpv-ipc", "mpv-args", "follow", "decode-throttle", "latency-offset", LogOption.name])
        .union(AudioOptions.valueOptions)

    /// Flags that both take: `--no-stream` (a joiner plays only its own copy, never streams the
    /// group's item), `--allow-urls` (a joiner opens the group's `http(s)` item itself) and
    /// `--wake-guard` (the built-in player keeps the processors awake before its frames).
    /// `--json` and `--verbose` choose how events are printed (`EventStyle`).
    static let flags: Set<String> = ["no-stream", "allow-urls", "wake-guard", "json", "verbose"]

    /// Which player shows the media.
    typealias Player = WatchParty.Configuration.Player

    var name: String
    var terminalVideo: Bool
    var presentationLog: String?
    /// How events are printed: sentences by default, `--verbose` or `--json`.
    var eventStyle: EventStyle
    /// Whether events are JSON lines (`--json`).
    var jsonEvents: Bool { eventStyle == .json }
    var clock: any MonotonicDerivedClock
    var player: Player
    /// mpv's IPC socket (nil: a temporary one).
    var mpvIPC: String?
    /// More mpv options.
    var mpvArguments: [String]
    /// Who carries out the group's commands (`--follow`): nil for `scheduled` (the default, the
    /// player's own way), or the benchmarks' baseline for `on-receipt` (`TandemBench.OnReceipt`).
    var follower: (any WatchPartyFollower)?
    /// Bench only: the built-in player decodes this many times slower (`--decode-throttle`, default 1).
    var decodeThrottle: Double
    /// How much earlier than the group's timeline this player presents, in ms (`--latency-offset
    /// MS`, −1000…1000, default 0): positive for an output that lags. Local: nothing goes on the wire.
    var latencyOffset: Int
    /// `--no-stream`: never stream the group's item from a holder (default: stream it when this
    /// participant's media does not hold it).
    var refusesStreaming: Bool
    /// `--allow-urls`: open the group's `http(s)` item without asking (default: ask at a terminal,
    /// refuse without one).
    var allowsURLs: Bool
    /// `--wake-guard`: `HeadlessPlayer.Options.wakeGuard`.
    var wakeGuard: Bool
    /// The built-in player's sound (`--audio`, `--audio-device`, `--volume`, `--audio-log`).
    var audio: AudioOptions
    /// What to tell the person about the player chosen for them, if anything (`PlayerChoice`).
    var choiceLine: String?
    /// The `mpv` on the `PATH`, if any (mpv is started from there).
    var mpvExecutable: String?
    /// `tandem host --max-hold SECONDS`: the host's cap on how long anyone's suspension holds the
    /// group (`WatchParty.Configuration.maximumHold`); nil, each reason's own.
    var maximumHold: TimeSpan?

    /// The range of `--latency-offset` and of the keys and the command that change it (ms).
    static let latencyOffsets = WatchParty.Configuration.latencyOffsets

    init(_ arguments: Arguments, defaultName: String) throws(CLIError) {
        name = arguments.value("name") ?? defaultName
        let choice = try Self.playerChoice(arguments)
        terminalVideo = choice.terminalVideo
        choiceLine = choice.line
        presentationLog = arguments.value("presentation-log")
        self.player = choice.player
        mpvIPC = arguments.value("mpv-ipc")
        mpvArguments = (arguments.value("mpv-args") ?? "").split(separator: " ").map(String.init)
        // `--log FILE`: mpv's log with mpv, FFmpeg's messages with the built-in player (opened
        // here, so that a file that cannot be written fails before anything starts).
        if player == .mpv {
            mpvArguments += LogOption.mpvArguments(arguments.value(LogOption.name))
        } else {
            try LogOption.sendFFmpegMessages(to: arguments.value(LogOption.name))
        }
        let follow = arguments.value("follow") ?? "scheduled"
        switch follow {
        case "scheduled": follower = nil
        case OnReceipt().name: follower = OnReceipt()
        default: throw .usage("--follow is scheduled or on-receipt, not '\(follow)'")
        }
        decodeThrottle = try arguments.double("decode-throttle", default: 1)!
        guard decodeThrottle.isFinite, (1...100_000).contains(decodeThrottle) else { throw .usage("--decode-throttle is a factor from 1 to 100000") }
        let latency = arguments.value("latency-offset") ?? "0"
        guard let milliseconds = Int(latency), Self.latencyOffsets.contains(milliseconds) else {
            throw .usage("--latency-offset is a whole number of ms from -1000 to 1000 (positive presents earlier), not '\(latency)'")
        }
        latencyOffset = milliseconds
        mpvExecutable = Self.mpvOnPath()
        refusesStreaming = arguments.flags.contains("no-stream")
        allowsURLs = arguments.flags.contains("allow-urls")
        wakeGuard = arguments.flags.contains("wake-guard")
        audio = try AudioOptions(arguments, builtinPlayer: player == .builtin, defaultOutput: choice.audio)
        if player == .mpv {
            if arguments.value("video") == "terminal" { throw .usage("--video terminal is the built-in player's; mpv shows video in its own window") }
            if wakeGuard { throw .usage("--wake-guard is the built-in player's; mpv keeps its own time") }
        } else if mpvIPC != nil || arguments.value("mpv-args") != nil {
            throw .usage("--mpv-ipc and --mpv-args need --player mpv")
        }
        // `--events json` is the older spelling of `--json`, still taken so that scripts keep working.
        let events = arguments.value("events") ?? "text"
        guard ["json", "text"].contains(events) else { throw .usage("--events is json or text, not '\(events)'") }
        let json = events == "json" || arguments.flags.contains("json")
        let verbose = arguments.flags.contains("verbose")
        if json && verbose { throw .usage("--json and --verbose are two ways of printing events: choose one") }
        eventStyle = json ? .json : verbose ? .verbose : .sentences
        // A benchmarking aid: a local clock with an injected offset and drift, so that clock
        // synchronisation has real work to do when every participant runs on one machine.
        let offset = try arguments.double("clock-offset", default: 0)!
        let drift = try arguments.double("clock-drift-ppm", default: 0)!
        guard abs(offset) < 1e6, abs(drift) < 10_000 else { throw .usage("--clock-offset or --clock-drift-ppm is out of range") }
        let system = SystemClock()
        clock = offset == 0 && drift == 0
            ? system
            : SkewedClock(base: system, offset: Int64(offset * 1e9), driftPPM: drift, origin: system.instant().nanoseconds)
    }

    /// The player, picture and sound: as given, else as a person at a terminal wants them
    /// (`PlayerChoice`); a bad `--player`, `--video` or `--audio` is a usage error.
    private static func playerChoice(_ arguments: Arguments) throws(CLIError) -> PlayerChoice {
        let environment = ProcessInfo.processInfo.environment
        var situation = PlayerChoice.Situation(isTerminal: isatty(0) != 0 && isatty(1) != 0, mpvFound: mpvOnPath() != nil,
                                               hasDisplay: PlayerChoice.Situation.hasDisplay(in: environment))
        situation.soundServerFound = PlayerChoice.Situation.soundServerFound(in: environment, userID: getuid()) {
            FileManager.default.fileExists(atPath: $0)
        }
        if let video = arguments.value("video") {
            guard ["none", "terminal"].contains(video) else { throw .usage("--video is none or terminal, not '\(video)'") }
            situation.terminalVideo = video == "terminal"
        }
        if let player = arguments.value("player") {
            guard let chosen = Player(rawValue: player) else { throw .usage("--player is builtin or mpv, not '\(player)'") }
            situation.player = chosen
        }
        if let audio = arguments.value("audio") {
            guard let output = AudioOutputKind(rawValue: audio) else { throw .usage("--audio is pulse or none, not '\(audio)'") }
            situation.audio = output
        }
        situation.builtinOptionsGiven = arguments.flags.contains("wake-guard")
            || AudioOptions.valueOptions.subtracting(["audio"]).contains { arguments.value($0) != nil }
        return PlayerChoice(situation)
    }

    /// `--max-hold SECONDS`, a number of seconds from 0 to an hour (0: the group never waits for
    /// anyone's suspension), or nil when not given.
    static func maximumHold(_ arguments: Arguments) throws(CLIError) -> TimeSpan? {
        guard let text = arguments.value("max-hold") else { return nil }
        let cap = CoordinationCore.maximumHoldCap.seconds
        guard let seconds = Double(text), seconds.isFinite, (0...cap).contains(seconds) else {
            throw .usage("--max-hold is a number of seconds from 0 to \(Int(cap)), not '\(text)'")
        }
        return .seconds(seconds)
    }

    /// The path of `mpv` in the `PATH`'s directories, if one is executable there.
    static func mpvOnPath() -> String? {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        return directories.lazy.map { "\($0)/mpv" }.first { access($0, X_OK) == 0 }
    }
}
