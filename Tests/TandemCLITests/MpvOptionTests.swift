import Testing
import TandemTestKit
import TandemHarness

/// `--player mpv` on the command line: the options that only one player has, and bad choices, are refused clearly.
@Suite struct MpvOptionProcessTests {
    @Test(arguments: [
        (["--follow", "later"], "--follow is scheduled or on-receipt"),
        (["--player", "mpv", "--video", "terminal"], "--video terminal is the built-in player's"),
        (["--mpv-args", "--vo=null"], "--mpv-ipc and --mpv-args need --player mpv"),
        (["--player", "vlc"], "--player is builtin or mpv"),
    ])
    func optionsForTheOtherPlayerAreRefused(options: [String], message: String) throws {
        let run = try TandemProcess.run(["host", SampleClip.h264.path, "--bind", "127.0.0.1", "--port", "0"] + options, timeout: 20)
        #expect(run.status == 64)
        // The reason on the first line; a pointer to the help follows.
        #expect(run.standardError.split(separator: "\n").first?.contains(message) == true, "\(run.standardError)")
    }
}
