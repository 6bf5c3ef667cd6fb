#if canImport(Glibc)
import Glibc
#endif
import TandemMedia

/// The built-in player's sound options that `tandem host`, `join` and `play` share:
/// `--audio pulse|none` (default: `pulse` at a terminal, `none` otherwise, so that scripts,
/// tests and benchmarks choose sound explicitly; for `host` and `join`, `PlayerChoice`'s), `--audio-device SINK`, `--volume N` (0 to 150)
/// and `--audio-log FILE` (`AudioLog`'s JSON lines).
struct AudioOptions {
    /// The options with a value.
    static let valueOptions: Set<String> = ["audio", "audio-device", "volume", "audio-log"]
    /// The usage text of the options.
    static let usage = "[--audio pulse|none] [--audio-device SINK] [--volume N] [--audio-log FILE]"

    var output: AudioOutputKind
    var device: String?
    var volume: Int
    var log: String?

    /// The options of `arguments`; `defaultOutput` is where the sound goes without `--audio` (nil:
    /// `pulse` at a terminal, `none` otherwise).
    init(_ arguments: Arguments, builtinPlayer: Bool, defaultOutput: AudioOutputKind? = nil) throws(CLIError) {
        let given = Self.valueOptions.filter { arguments.value($0) != nil }
        if !builtinPlayer, let first = given.sorted().first {
            throw .usage("--\(first) is the built-in player's; mpv plays its own sound (--mpv-args)")
        }
        let atTerminal = isatty(0) != 0 || isatty(1) != 0
        let audio = arguments.value("audio") ?? (defaultOutput ?? (atTerminal ? .pulse : AudioOutputKind.none)).rawValue
        guard let output = AudioOutputKind(rawValue: audio) else { throw .usage("--audio is pulse or none, not '\(audio)'") }
        self.output = output
        device = arguments.value("audio-device")
        if let device, device.isEmpty { throw .usage("--audio-device wants a sink's name (pactl list short sinks)") }
        let volume = arguments.value("volume") ?? "100"
        guard let percent = Int(volume), (0...HeadlessPlayer.maximumVolume).contains(percent) else {
            throw .usage("--volume is a whole number from 0 to \(HeadlessPlayer.maximumVolume), not '\(volume)'")
        }
        self.volume = percent
        log = arguments.value("audio-log")
        if output == .none, device != nil || log != nil {
            throw .usage("--audio-device and --audio-log need --audio pulse")
        }
    }

    /// Sets the player's options to these.
    func apply(to options: inout HeadlessPlayer.Options) {
        options.audioOutput = output
        options.audioDevice = device
        options.volume = volume
        options.audioLog = log
    }
}
