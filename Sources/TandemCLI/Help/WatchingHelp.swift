/// The options `tandem host` and `tandem join` share, explained.
enum WatchOptionsHelp {
    /// Who you are, what you see and hear, and which player.
    static let watching: [OptionHelp] = [
        OptionHelp("-n, --name NAME", "your name as the others see it (default: host for the host, your login name for a guest)"),
        OptionHelp("--player builtin|mpv", "who shows the media: Tandem's own player, or mpv in a window of its own "
            + "(default: at a terminal, mpv when it is installed and there is a display, else builtin; builtin without a terminal)"),
        OptionHelp("--video none|terminal", "the built-in player's picture: none, or drawn in this terminal "
            + "(default: terminal at a terminal, none without one)"),
        OptionHelp("--audio pulse|none", "the built-in player's sound, through PulseAudio or PipeWire, or none "
            + "(default: pulse at a terminal, none without one)"),
        OptionHelp("--audio-device SINK", "the sink to play into (pactl list short sinks; default: the server's)"),
        OptionHelp("--volume N", "the volume in percent, 0 to 150 (default: 100; the keys 9 and 0 change it, m mutes)"),
        OptionHelp("--audio-log FILE", "write each write to the sound output as a JSON line, for tandem bench audio"),
        OptionHelp("--mpv-args \"ARGS\"", "more options for mpv, space-separated, such as \"--vo=x11 --ao=pulse\" (needs --player mpv)"),
        OptionHelp("--mpv-ipc PATH", "the socket Tandem drives mpv through (default: a temporary one)"),
        OptionHelp("--latency-offset MS", "present this many ms earlier than the group's timeline, for a display or speakers that lag; "
            + "negative presents later; -1000 to 1000, only this player moves (default: 0; the keys - and = change it while watching)"),
        OptionHelp("--json", "print what happens as JSON lines, one per event, for programs (default: sentences for people)"),
        OptionHelp("--verbose", "print every event with its technical fields, one line each (KIND key=value…)"),
        OptionHelp("--presentation-log PATH", "write when each frame was due and when it was shown, as JSON lines"),
        LogOption.help,
    ]

    /// Streaming and URLs, then the benchmarking aids.
    static let sharing: [OptionHelp] = [
        OptionHelp("--no-stream", "play only your own copy of the media: never stream the group's item from someone who has it"),
        OptionHelp("--allow-urls", "open the group's http(s) item without asking (default: ask at a terminal, refuse without one)"),
        OptionHelp("--follow scheduled|on-receipt", "benchmarking: carry out the group's changes at their instants (scheduled, the default) "
            + "or as each arrives (on-receipt, the baseline the benchmarks compare with)"),
        OptionHelp("--clock-offset SECONDS", "benchmarking: run this participant's clock that many seconds off (default: 0)"),
        OptionHelp("--clock-drift-ppm PPM", "benchmarking: make this participant's clock drift by PPM parts per million (default: 0)"),
        OptionHelp("--decode-throttle FACTOR", "benchmarking: decode FACTOR times slower, to make a slow participant (default: 1)"),
        OptionHelp("--wake-guard", "keep the processors awake just before each frame once a wake-up was seen late (the built-in player; default: off)"),
        OptionHelp("commands", "lines on standard input when it is no terminal: play, pause, seek SECONDS, rate R, next, prev, "
            + "queue add PATH, say TEXT, offset MS, volume N, mute, health, op NAME and deop NAME (an operator makes NAME one, "
            + "or takes it back), control operators|everyone (an operator sets who controls playback), kick NAME (an operator "
            + "removes NAME for good: the others move to a new key), rekey (a new key, removing nobody), invite (an operator's: "
            + "the invite that admits now), leave, end "
            + "(ends the party for everyone: in a hosted party, an operator's)"),
    ]
}

extension HostCommand {
    static var options: [OptionHelp] {
        [OptionHelp("MEDIA…|URL", "what to play: files (a playlist, a folder's media) or one http(s) URL"),
         OptionHelp("--port P", "the relay's port, TCP and UDP (default: \(ServeCommand.defaultPort); 0 picks a free one)"),
         OptionHelp("--bind HOST", "the address the relay listens on (default: 0.0.0.0, every IPv4 address)"),
         OptionHelp("--advertise HOST", "the address the invite names, for the others to reach the relay at (default: the bind "
            + "address, or this machine's address on its default route)"),
         OptionHelp("--relay HOST:PORT[,…]", "use relays already running (tandem serve) rather than starting one"),
         OptionHelp("--relay-linger SECONDS", "how long the relay this command starts stays once its last session is over, "
            + "for a later host on its port (default: 10; a relay reused keeps its own)"),
         OptionHelp("--session-epoch random|NS", "where the session's clock starts (default: random)"),
         OptionHelp("--invite-expires DURATION", "the invite admits joiners for this long (90s, 30m, 2h, 1d; at most 30 days): "
            + "the relay checks a ticket the host signs, on its own clock; those in stay (default: as long as the party)"),
         OptionHelp("--control everyone|operators", "who may play, pause, seek, change the rate, the item or the queue: "
            + "everyone (the default), or the operators alone (you, and whom an operator makes one with op NAME; "
            + "the status line marks them @NAME). Either way only operators end the party"),
         OptionHelp("--max-hold SECONDS", "the longest the group waits for anyone who buffers, scrubs or is held up otherwise; "
            + "then it plays on without them (default: by reason, 15 s for buffering, 30 s for scrubbing or loading, "
            + "60 s for an action to take, 120 s for an interstitial)")]
            + WatchOptionsHelp.watching + WatchOptionsHelp.sharing
            + [OptionHelp("relay limits", "the options of tandem serve that bound the relay's memory and connections "
                + "(tandem help serve) are taken here too, for the relay this command starts")]
    }
}

extension JoinCommand {
    static var options: [OptionHelp] {
        [OptionHelp("INVITE", "the host's tandem:// invite (or --invite-file PATH, or the environment variable TANDEM_INVITE)"),
         OptionHelp("MEDIA…", "your own copy of what the group plays; without one, Tandem streams it from someone who has it"),
         OptionHelp("--invite-file PATH", "read the invite from a file (keep it private: chmod 600)")]
            + WatchOptionsHelp.watching + WatchOptionsHelp.sharing
    }
}

extension PlayCommand {
    static var options: [OptionHelp] {
        [OptionHelp("FILE", "the media file to play"),
         OptionHelp("--wall", "several files at once, each in its tile of the terminal, on one timeline (video only; up to 9)"),
         OptionHelp("--start SECONDS", "start that many seconds in (default: 0)"),
         OptionHelp("--rate R", "play at rate R, from 0.25 to 4 (default: 1)"),
         OptionHelp("--duration SECONDS", "stop after that many seconds (default: at the end)"),
         OptionHelp("--video none|terminal", "draw the picture in this terminal or not (default: terminal at a terminal, else none)"),
         OptionHelp("--presentation-log PATH", "write when each frame was due and when it was shown, as JSON lines"),
         OptionHelp("--snapshot SECONDS:PATH", "write the frame at that many seconds in as a PNG to PATH (may be repeated)"),
         OptionHelp("--threads N", "video decoding threads (default: 0, FFmpeg chooses)")]
            + WatchOptionsHelp.watching.filter { $0.form.hasPrefix("--audio") || $0.form.hasPrefix("--volume") }
            + [OptionHelp("--log FILE", "write FFmpeg's messages to FILE (default: none are written)")]
    }
}

extension ProbeCommand {
    static var options: [OptionHelp] {
        [OptionHelp("FILE", "the media file to describe"),
         OptionHelp("--json", "print it as one JSON object")]
    }
}
