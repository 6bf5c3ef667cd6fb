import Foundation
import Testing
import TandemTestKit
import TandemHarness

/// A joiner whose display name carries escape sequences, seen by the host at a real terminal
/// (tmux): the status line shows the name's printable part, and the terminal obeys nothing of it.
@Suite(.serialized, .timeLimit(.minutes(2))) struct HostileNameTerminalProcessTests {
    @Test(.enabled(if: TmuxSession.isInstalled, "needs tmux"))
    func theStatusLineShowsAHostileNameWithoutObeyingIt() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let clip = SampleClip.h264.path
        let hostLog = fixtures.path("host.out")
        let tmux = try TmuxSession.start("\(TandemProcess.executablePath) host \(clip) --bind 127.0.0.1 --port 0 --name host 2>&1 | tee \(hostLog); sleep 5")
        defer { tmux.kill() }
        let name = tmux.name
        _ = try TmuxSession.run(["select-pane", "-t", name, "-T", "tandem-title"])
        let invite = try #require(TmuxSession.invite(inLog: hostLog), "the host printed no invite")

        // Retitle the window, clear the screen, and write a fake line, all from a name.
        let hostile = "mal\u{1B}]2;pwned\u{7}lory\u{1B}[2J\u{1B}[H\u{1B}[1;31mFAKE"
        let joiner = try WatchProcess.join(invite: invite, file: clip, arguments: ["--name", hostile, "--events", "json"], name: "mallory")
        defer { joiner.kill() }
        func screen() throws -> String { try tmux.screen() }
        #expect(try waitFor(20) { try screen().contains("@host, malloryFAKE") }, "\((try? screen()) ?? "")")
        #expect(try TmuxSession.run(["display-message", "-p", "-t", name, "#{pane_title}"]).trimmingCharacters(in: .whitespacesAndNewlines)
            == "tandem-title")
        // Nothing cleared the screen: the invite printed at the start is still on it.
        #expect(try screen().contains("tandem://"))
        try tmux.sendKeys("e", "e")
        #expect(joiner.waitForExit(timeout: 20) == 3, "\(joiner.standardError)")
    }
}
