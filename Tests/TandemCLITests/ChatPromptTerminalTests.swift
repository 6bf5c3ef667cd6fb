import Foundation
import Testing
import TandemTestKit
import TandemHarness

/// The chat prompt at a real terminal (tmux): Enter opens a one-line prompt
/// above the status line, typed keys (a space, `q`) are text and fire no playback key, Backspace
/// edits, Enter sends, Esc cancels; the others' lines and one's own show above the status line
/// with their names. The latency offset's keys show on the status line.
@Suite(.serialized, .timeLimit(.minutes(3))) struct ChatPromptTerminalProcessTests {
    @Test func enterOpensThePromptAndItsKeysAreText() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let clip = SampleClip.h264BFrames.path
        let hostLog = fixtures.path("host.out")
        let terminal = try TmuxSession.start(
            "\(TandemProcess.executablePath) host \(clip) --bind 127.0.0.1 --port 0 --name host 2>&1 | tee \(hostLog); sleep 5",
            prefix: "tandem-chat")
        defer { terminal.kill() }
        let invite = try #require(TmuxSession.invite(inLog: hostLog))
        let joiner = try WatchProcess.join(invite: invite, file: clip, arguments: ["--name", "ana", "--events", "json"], name: "ana",
                                           acceptsCommands: true)
        defer { joiner.kill() }
        func screen() throws -> String { try terminal.screen() }
        func lines() throws -> [String] { try screen().split(separator: "\n").map(String.init) }
        #expect(try waitFor(20) { try screen().contains("ana, @host") })

        // Enter: the prompt opens above the status line.
        try terminal.sendKeys("Enter")
        #expect(try waitFor(10) { let shown = try lines(); return shown.count >= 2 && shown[shown.count - 2].hasPrefix("say: ") && shown.last?.contains("ana, @host") == true },
                "\((try? screen()) ?? "")")
        // A space and `q` are text here: nothing plays, nobody leaves.
        try terminal.sendKeys("-l", "a quiz")
        try terminal.sendKeys("BSpace")
        #expect(try waitFor(10) { try screen().contains("say: a qui") }, "\((try? screen()) ?? "")")
        try terminal.sendKeys("Enter")
        #expect(joiner.waitUntil(timeout: 10) { _ in ChatWatchProcessTests.chats(joiner).map(\.text) == ["a qui"] }, "\(joiner.lines.suffix(5))")
        #expect(ChatWatchProcessTests.chats(joiner).first?.from == "host")
        #expect(!joiner.events.contains { $0.event == "timeline" && $0.change == "play" }, "the space typed played")
        // One's own line, above the status line, and the prompt closed.
        #expect(try waitFor(10) { let text = try screen(); return text.contains("host: a qui") && !text.contains("say: ") }, "\((try? screen()) ?? "")")

        // Another's line shows by name.
        #expect(joiner.send("say hello from ana") != nil)
        #expect(try waitFor(10) { try screen().contains("ana: hello from ana") }, "\((try? screen()) ?? "")")

        // Esc cancels: nothing is sent, the prompt closes, keys are keys again.
        try terminal.sendKeys("Enter")
        try terminal.sendKeys("-l", "nope")
        #expect(try waitFor(10) { try screen().contains("say: nope") })
        try terminal.sendKeys("Escape")
        #expect(try waitFor(10) { try !screen().contains("say: ") }, "\((try? screen()) ?? "")")
        try terminal.sendKeys(" ")
        #expect(joiner.waitUntil(timeout: 10) { $0.contains { $0.event == "timeline" && $0.change == "play" } })
        #expect(!ChatWatchProcessTests.chats(joiner).map(\.text).contains("nope"))
        // The latency offset's keys: `=` and `-` by 10 ms, on the status line.
        try terminal.sendKeys("=", "=", "-")
        #expect(try waitFor(10) { try screen().contains("offset +10 ms") }, "\((try? screen()) ?? "")")
        try terminal.sendKeys("e", "e")
        #expect(joiner.waitForExit(timeout: 20) == 3, "\(joiner.standardError)")
    }
}
