import TandemBench
import TandemClock
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

    /// The range of `--latency-offset` and of the keys and the command that change it (ms).
    static let latencyOffsets = WatchParty.Configuration.latencyOffsets

    init(_ arguments: Arguments, defaultName: String) throws(CLIError) {
        name = arguments.value("name") ?? defaultName
        let video = arguments.value("video") ?? "none"
        guard ["none", "terminal"].contains(video) else { throw .usage("--video is none or terminal, not '\(video)'") }
        terminalVideo = video == "terminal"
        presentationLog = arguments.value("presentation-log")
        let player = arguments.value("player") ?? "builtin"
        guard let choice = Player(rawValue: player) else { throw .usage("--player is builtin or mpv, not '\(player)'") }
        self.player = choice
        mpvIPC = arguments.value("mpv-ipc")
        mpvArguments = (arguments.value("mpv-args") ?? "").split(separator: " ").map(String.init)
        // `--log FILE`: mpv's log with mpv, FFmpeg's messages with the built-in player (opened
        // here, so that a file that cannot be written fails before anything starts).
        if choice == .mpv {
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
        refusesStreaming = arguments.flags.contains("no-stream")
        allowsURLs = arguments.flags.contains("allow-urls")
        wakeGuard = arguments.flags.contains("wake-guard")
        audio = try AudioOptions(arguments, builtinPlayer: choice == .builtin)
        if choice == .mpv {
            if terminalVideo { throw .usage("--video terminal is the built-in player's; mpv shows video in its own window") }
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
            : SkewedClock(base: system, offset: Int64(offset * 1e9), driftPPM: drift, origin: system.now())
    }
}
