import TandemMedia

/// Which player a watch uses, with its picture and sound, when the command line leaves some of it
/// unsaid, and the one line that tells a person what was chosen and how to choose the other.
///
/// At a terminal (standard input and output both are one) a person is watching: mpv when it is
/// installed and there is a display for its window, otherwise the built-in player with its
/// picture in the terminal and its sound on. Without a terminal (a script, a test, a benchmark)
/// the defaults are what they always were, the built-in player with no picture and no sound, and
/// nothing is said: a program chooses what it wants explicitly. What is given explicitly is kept,
/// and a built-in player's option (`--video`, `--audio`…) implies the built-in player.
///
/// Pure: what the process sees comes in as a `Situation`.
public struct PlayerChoice: Sendable, Equatable {
    /// What the command line gave and what the process sees.
    public struct Situation: Sendable, Equatable {
        /// Whether standard input and standard output both are a terminal.
        public var isTerminal: Bool
        /// Whether an `mpv` executable is on the `PATH`.
        public var mpvFound: Bool
        /// Whether a display is there for a window (`DISPLAY` or `WAYLAND_DISPLAY` set).
        public var hasDisplay: Bool
        /// `--player`, if given.
        public var player: WatchParty.Configuration.Player?
        /// `--video terminal` (true) or `--video none` (false), if given.
        public var terminalVideo: Bool?
        /// `--audio`, if given.
        public var audio: AudioOutputKind?
        /// Whether another of the built-in player's own options was given (`--audio-device`,
        /// `--volume`, `--audio-log`, `--wake-guard`): it implies the built-in player.
        public var builtinOptionsGiven: Bool
        /// Whether a sound server's socket is there to play on (`soundServerFound(in:exists:)`).
        public var soundServerFound: Bool

        /// A situation; what is not given is nil or false.
        public init(isTerminal: Bool, mpvFound: Bool, hasDisplay: Bool, player: WatchParty.Configuration.Player? = nil,
                    terminalVideo: Bool? = nil, audio: AudioOutputKind? = nil, builtinOptionsGiven: Bool = false,
                    soundServerFound: Bool = true) {
            self.isTerminal = isTerminal
            self.mpvFound = mpvFound
            self.hasDisplay = hasDisplay
            self.player = player
            self.terminalVideo = terminalVideo
            self.audio = audio
            self.builtinOptionsGiven = builtinOptionsGiven
            self.soundServerFound = soundServerFound
        }

        /// Whether a sound server is there, as libpulse would look for one (PipeWire's desktop
        /// sessions answer at the same place): `PULSE_SERVER`'s socket when it names one (a
        /// `tcp:` server is taken as there), else `pulse/native` in `XDG_RUNTIME_DIR`, else in
        /// `/run/user/UID`. `exists` says whether a path exists.
        public static func soundServerFound(in environment: [String: String], userID: UInt32,
                                            exists: (String) -> Bool) -> Bool {
            if let server = environment["PULSE_SERVER"], !server.isEmpty {
                // One or more servers, space-separated, each `unix:PATH`, `tcp:HOST`, or a path.
                return server.split(separator: " ").contains { entry in
                    let entry = String(entry)
                    if entry.hasPrefix("unix:") { return exists(String(entry.dropFirst(5))) }
                    if entry.hasPrefix("/") { return exists(entry) }
                    return true
                }
            }
            let runtime = environment["XDG_RUNTIME_DIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/run/user/\(userID)"
            return exists(runtime + "/pulse/native")
        }

        /// Whether a display is named in `environment`: `DISPLAY` or `WAYLAND_DISPLAY`, not empty.
        public static func hasDisplay(in environment: [String: String]) -> Bool {
            ["DISPLAY", "WAYLAND_DISPLAY"].contains { !(environment[$0] ?? "").isEmpty }
        }
    }

    /// The player.
    public var player: WatchParty.Configuration.Player
    /// Whether the built-in player draws its picture in the terminal (never with mpv).
    public var terminalVideo: Bool
    /// Where the built-in player's sound goes (`.none` with mpv, which plays its own).
    public var audio: AudioOutputKind
    /// What to tell the person, in one line; nil when there is nothing to tell (no terminal, or
    /// everything was chosen on the command line).
    public var line: String?

    /// The choice in `situation`.
    public init(_ situation: Situation) {
        let implied: WatchParty.Configuration.Player? = situation.terminalVideo != nil || situation.audio != nil || situation.builtinOptionsGiven
            ? .builtin : nil
        let watching = situation.isTerminal
        let mpvUsable = situation.mpvFound && situation.hasDisplay
        player = situation.player ?? implied ?? (watching && mpvUsable ? .mpv : .builtin)
        if player == .mpv {
            terminalVideo = false
            audio = .none
        } else {
            terminalVideo = situation.terminalVideo ?? watching
            // Sound by default at a terminal, where there is a server to play it.
            audio = situation.audio ?? (watching && situation.soundServerFound ? .pulse : .none)
        }
        line = Self.line(player: player, terminalVideo: terminalVideo, audio: audio, situation: situation)
    }

    /// The line for a choice: at a terminal, what plays where, and how to have the other player;
    /// with mpv chosen and no display, that mpv has no window.
    private static func line(player: WatchParty.Configuration.Player, terminalVideo: Bool, audio: AudioOutputKind,
                             situation: Situation) -> String? {
        guard situation.isTerminal else { return nil }
        if player == .mpv {
            if !situation.hasDisplay { return "No display (DISPLAY is not set): mpv plays without a window; --player builtin plays in this terminal" }
            guard situation.player == nil else { return nil }
            return "Playing in mpv's window; --player builtin plays in this terminal"
        }
        guard situation.player == nil else { return nil }
        let picture = terminalVideo ? "in this terminal" : "with no picture"
        let sound = audio == .none ? (situation.audio == nil && !situation.soundServerFound ? "no sound (no sound server found)" : "no sound")
            : "sound"
        let other: String
        if situation.mpvFound && situation.hasDisplay {
            other = "--player mpv plays in mpv's window"
        } else if situation.mpvFound {
            other = "mpv needs a display for its window"
        } else {
            other = "install mpv to play in a window"
        }
        return "Playing \(picture), with \(sound); \(other)"
    }
}
