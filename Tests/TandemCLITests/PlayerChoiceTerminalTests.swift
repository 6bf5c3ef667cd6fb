import Foundation
import Testing
import TandemTestKit
import TandemHarness

/// `tandem host FILE` at a terminal (standard input and output both a tmux pane), with no player
/// chosen: the line that says which player plays and how to have the other is on the screen, and
/// with the picture in the terminal it stays there under the picture, with the invite; the
/// picture follows a resize.
@Suite(.serialized, .timeLimit(.minutes(2))) struct PlayerChoiceTerminalProcessTests {
    @Test(arguments: [
        // No mpv on the PATH, no display, and the sound server named does not exist: the picture
        // in the terminal, and no sound, said once, with why.
        ([String](), "Playing in this terminal, with no sound (no sound server found); install mpv to play in a window"),
        // mpv asked for, no display: it plays without a window, and says so.
        (["--player", "mpv", "--mpv-args", "--ao=null"],
         "No display (DISPLAY is not set): mpv plays without a window; --player builtin plays in this terminal"),
    ])
    func theChoiceIsSaidInOneLine(options: [String], line: String) throws {
        let clip = SampleClip.h264.path
        let command = "env -u DISPLAY -u WAYLAND_DISPLAY PATH=/nonexistent PULSE_SERVER=unix:/nonexistent "
            + "\(TandemProcess.executablePath) host \(clip) --bind 127.0.0.1 --port 0 --name host "
            + options.map { "'\($0)'" }.joined(separator: " ") + "; /bin/sleep 5"
        let tmux = try TmuxSession.start(command, prefix: "tandem-choice", width: 120, height: 40)
        defer { tmux.kill() }
        #expect(try waitFor(20) { try tmux.screen().contains(line) }, "\((try? tmux.screen()) ?? "")")
        #expect(try waitFor(10) { try tmux.screen().contains("tandem://") }, "no invite on the screen: \((try? tmux.screen()) ?? "")")
        if options.isEmpty {
            // Playing, the picture redrawn many times over: the line is still there, under it.
            try tmux.sendKeys(" ")
            #expect(try waitFor(20) { try tmux.screen().contains("▶") })
            Thread.sleep(forTimeInterval: 1)
            let screen = try tmux.screen()
            #expect(screen.contains(line) && screen.contains("tandem://"), "\(screen)")
            // Said once: the player did not try the server and say it again.
            #expect(!screen.contains("playing without sound"), "\(screen)")
            // Resized to 80×24: the picture starts afresh above the last 4 rows, its status
            // line on the 20th.
            _ = try TmuxSession.run(["resize-window", "-t", tmux.name, "-x", "80", "-y", "24"])
            #expect(try waitFor(10) {
                let rows = try tmux.screen().split(separator: "\n", omittingEmptySubsequences: false)
                return rows.count >= 20 && rows[19].hasPrefix("▶")
            }, "\((try? tmux.screen()) ?? "")")
        }
        try tmux.sendKeys("q")
    }
}
