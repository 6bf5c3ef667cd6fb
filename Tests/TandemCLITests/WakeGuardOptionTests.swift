import Testing
import TandemTestKit
import TandemHarness

/// `--wake-guard` on `tandem host` and `tandem join`: listed in the help, and refused with mpv,
/// whose timing is its own, before anything starts.
@Suite struct WakeGuardOptionProcessTests {
    @Test(arguments: [["host", SampleClip.h264.path, "--bind", "127.0.0.1", "--port", "0"], ["join", "tandem://127.0.0.1:1/x?k=y"]])
    func theWakeGuardIsTheBuiltInPlayers(command: [String]) throws {
        let run = try TandemProcess.run(command + ["--player", "mpv", "--wake-guard"], timeout: 20)
        #expect(run.status == 64)
        #expect(run.standardError.split(separator: "\n").first?.contains("--wake-guard is the built-in player's") == true,
                "\(run.standardError)")
    }

    @Test(arguments: ["host", "join"])
    func theHelpListsIt(command: String) throws {
        let run = try TandemProcess.run([command, "--no-such-flag"], timeout: 20)
        #expect(run.status == 64)
        #expect(run.standardError.contains("tandem help \(command)"), "\(run.standardError)")
        #expect(try TandemProcess.run(["help", command]).standardOutput.contains("[--wake-guard]"))
    }
}
