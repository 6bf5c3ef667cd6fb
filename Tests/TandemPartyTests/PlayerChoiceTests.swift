import Testing
import TandemMedia
import TandemParty

/// Which player a watch gets when the command line leaves it unsaid (`PlayerChoice`): at a
/// terminal, one people can watch and a line saying so; without one, nothing changes.
@Suite struct PlayerChoiceTests {
    typealias Situation = PlayerChoice.Situation

    @Test func atATerminalWithMpvAndADisplayMpvPlaysInItsWindow() {
        let choice = PlayerChoice(Situation(isTerminal: true, mpvFound: true, hasDisplay: true))
        #expect(choice.player == .mpv)
        #expect(choice.audio == .none && !choice.terminalVideo)
        #expect(choice.line == "Playing in mpv's window; --player builtin plays in this terminal")
    }

    @Test(arguments: [(true, "mpv needs a display for its window"), (false, "install mpv to play in a window")])
    func atATerminalWithoutMpvsWindowTheTerminalShowsThePictureWithSound(mpvFound: Bool, hint: String) {
        let choice = PlayerChoice(Situation(isTerminal: true, mpvFound: mpvFound, hasDisplay: false))
        #expect(choice.player == .builtin)
        #expect(choice.terminalVideo && choice.audio == .pulse)
        #expect(choice.line == "Playing in this terminal, with sound; \(hint)")
    }

    @Test func mpvWithoutADisplayIsTheBuiltInPlayersTurnEvenWithMpvInstalled() {
        let choice = PlayerChoice(Situation(isTerminal: true, mpvFound: false, hasDisplay: true))
        #expect(choice.player == .builtin)
        #expect(choice.line?.hasSuffix("install mpv to play in a window") == true)
    }

    @Test("without a terminal the defaults are silent and headless, whatever is installed",
          arguments: [(true, true), (true, false), (false, true), (false, false)])
    func withoutATerminalNothingChanges(mpvFound: Bool, hasDisplay: Bool) {
        let choice = PlayerChoice(Situation(isTerminal: false, mpvFound: mpvFound, hasDisplay: hasDisplay))
        #expect(choice == PlayerChoice(Situation(isTerminal: false, mpvFound: false, hasDisplay: false)))
        #expect(choice.player == .builtin && !choice.terminalVideo && choice.audio == .none)
        #expect(choice.line == nil)
    }

    @Test func withNoSoundServerTheDefaultIsSilenceAndTheLineSaysWhy() {
        let none = PlayerChoice(Situation(isTerminal: true, mpvFound: false, hasDisplay: false, soundServerFound: false))
        #expect(none.player == .builtin && none.terminalVideo && none.audio == .none)
        #expect(none.line == "Playing in this terminal, with no sound (no sound server found); install mpv to play in a window")
        // `--audio pulse` given: kept (the player says in its own line that no server answers).
        let asked = PlayerChoice(Situation(isTerminal: true, mpvFound: false, hasDisplay: false, audio: .pulse, soundServerFound: false))
        #expect(asked.audio == .pulse)
    }

    @Test func aSoundServerIsFoundWhereLibpulseLooks() {
        let sockets: Set<String> = ["/run/user/1000/pulse/native", "/tmp/xdg/pulse/native", "/srv/pulse.sock"]
        let exists = { (path: String) in sockets.contains(path) }
        #expect(Situation.soundServerFound(in: [:], userID: 1000, exists: exists))
        #expect(!Situation.soundServerFound(in: [:], userID: 0, exists: exists))
        #expect(Situation.soundServerFound(in: ["XDG_RUNTIME_DIR": "/tmp/xdg"], userID: 0, exists: exists))
        #expect(!Situation.soundServerFound(in: ["XDG_RUNTIME_DIR": "/tmp/other"], userID: 1000, exists: exists))
        #expect(Situation.soundServerFound(in: ["PULSE_SERVER": "unix:/srv/pulse.sock"], userID: 0, exists: exists))
        #expect(!Situation.soundServerFound(in: ["PULSE_SERVER": "unix:/srv/gone.sock"], userID: 1000, exists: exists))
        #expect(Situation.soundServerFound(in: ["PULSE_SERVER": "tcp:speakers.local"], userID: 0, exists: exists))
    }

    @Test func whatIsGivenIsKeptAndABuiltInOptionImpliesTheBuiltInPlayer() {
        // `--video none` at a terminal with mpv at hand: the built-in player, no picture, sound on.
        let quiet = PlayerChoice(Situation(isTerminal: true, mpvFound: true, hasDisplay: true, terminalVideo: false))
        #expect(quiet.player == .builtin && !quiet.terminalVideo && quiet.audio == .pulse)
        #expect(quiet.line == "Playing with no picture, with sound; --player mpv plays in mpv's window")
        // `--audio none`.
        let silent = PlayerChoice(Situation(isTerminal: true, mpvFound: true, hasDisplay: true, audio: AudioOutputKind.none))
        #expect(silent.player == .builtin && silent.terminalVideo && silent.audio == .none)
        #expect(silent.line == "Playing in this terminal, with no sound; --player mpv plays in mpv's window")
        // `--volume 50`.
        #expect(PlayerChoice(Situation(isTerminal: true, mpvFound: true, hasDisplay: true, builtinOptionsGiven: true)).player == .builtin)
        // `--player builtin` at a terminal: its defaults, nothing said (the person chose).
        let chosen = PlayerChoice(Situation(isTerminal: true, mpvFound: true, hasDisplay: true, player: .builtin))
        #expect(chosen.terminalVideo && chosen.audio == .pulse && chosen.line == nil)
        // `--player builtin --video terminal --audio pulse` without a terminal: as given.
        let scripted = PlayerChoice(Situation(isTerminal: false, mpvFound: true, hasDisplay: true, player: .builtin,
                                              terminalVideo: true, audio: .pulse))
        #expect(scripted.terminalVideo && scripted.audio == .pulse && scripted.line == nil)
        // `--player mpv` with a display: nothing to say.
        #expect(PlayerChoice(Situation(isTerminal: true, mpvFound: true, hasDisplay: true, player: .mpv)).line == nil)
    }

    @Test func mpvChosenWithoutADisplayIsSaidAtATerminalOnly() {
        let atTerminal = PlayerChoice(Situation(isTerminal: true, mpvFound: true, hasDisplay: false, player: .mpv))
        #expect(atTerminal.player == .mpv)
        #expect(atTerminal.line == "No display (DISPLAY is not set): mpv plays without a window; --player builtin plays in this terminal")
        // A benchmark's headless mpv says nothing.
        #expect(PlayerChoice(Situation(isTerminal: false, mpvFound: true, hasDisplay: false, player: .mpv)).line == nil)
    }

    @Test func aDisplayIsNamedByDisplayOrWaylandDisplayNotEmpty() {
        #expect(Situation.hasDisplay(in: ["DISPLAY": ":0"]))
        #expect(Situation.hasDisplay(in: ["WAYLAND_DISPLAY": "wayland-0"]))
        #expect(!Situation.hasDisplay(in: ["DISPLAY": ""]))
        #expect(!Situation.hasDisplay(in: ["TERM": "xterm"]))
    }
}
