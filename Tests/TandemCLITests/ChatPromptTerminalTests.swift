import Foundation
import Testing
import TandemTestKit

/// The chat prompt at a real terminal (tmux; issue 15, item 5): Enter opens a one-line prompt
/// above the status line, typed keys (a space, `q`) are text and fire no playback key, Backspace
/// edits, Enter sends, Esc cancels; the others' lines and one's own show above the status line
/// with their names. The latency offset's keys show on the status line.
@Suite(.serialized, .timeLimit(.minutes(3))) struct ChatPromptTerminalTests {
    /// Runs a tmux command and returns what it printed (into a file: a pipe would be held open
    /// by the tmux server that `new-session` starts).
    func tmux(_ arguments: [String]) throws -> String {
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("tmux-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: outputPath.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: outputPath) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/tmux")
        process.arguments = arguments
        let output = try FileHandle(forWritingTo: outputPath)
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        if process.isRunning { process.terminate() }
        try output.close()
        return try String(contentsOf: outputPath, encoding: .utf8)
    }

    func waitFor(_ seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try condition() { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return try condition()
    }

    @Test func enterOpensThePromptAndItsKeysAreText() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let clip = SampleClip.h264BFrames.path
        let name = "tandem-chat-\(UUID().uuidString.prefix(8))"
        let hostLog = fixtures.path("host.out")
        _ = try tmux(["new-session", "-d", "-s", name, "-x", "200", "-y", "12",
                      "\(TandemProcess.executablePath) host \(clip) --bind 127.0.0.1 --port 0 --name host 2>&1 | tee \(hostLog); sleep 5"])
        defer { _ = try? tmux(["kill-session", "-t", name]) }
        #expect(waitFor(20) { (try? String(contentsOfFile: hostLog, encoding: .utf8))?.contains("tandem://") == true })
        let invite = try #require(try String(contentsOfFile: hostLog, encoding: .utf8)
            .split(whereSeparator: { $0 == "\n" || $0 == "\r" || $0 == " " }).first { $0.hasPrefix("tandem://") }.map(String.init))
        let joiner = try WatchProcess.join(invite: invite, file: clip, arguments: ["--name", "ana", "--events", "json"], name: "ana",
                                           acceptsCommands: true)
        defer { joiner.kill() }
        func screen() throws -> String { try tmux(["capture-pane", "-t", name, "-p"]) }
        func lines() throws -> [String] { try screen().split(separator: "\n").map(String.init) }
        #expect(try waitFor(20) { try screen().contains("ana, host") })

        // Enter: the prompt opens above the status line.
        _ = try tmux(["send-keys", "-t", name, "Enter"])
        #expect(try waitFor(10) { let shown = try lines(); return shown.count >= 2 && shown[shown.count - 2].hasPrefix("say: ") && shown.last?.contains("ana, host") == true },
                "\((try? screen()) ?? "")")
        // A space and `q` are text here: nothing plays, nobody leaves.
        _ = try tmux(["send-keys", "-t", name, "-l", "a quiz"])
        _ = try tmux(["send-keys", "-t", name, "BSpace"])
        #expect(try waitFor(10) { try screen().contains("say: a qui") }, "\((try? screen()) ?? "")")
        _ = try tmux(["send-keys", "-t", name, "Enter"])
        #expect(joiner.waitUntil(timeout: 10) { _ in ChatWatchTests.chats(joiner).map(\.text) == ["a qui"] }, "\(joiner.lines.suffix(5))")
        #expect(ChatWatchTests.chats(joiner).first?.from == "host")
        #expect(!joiner.events.contains { $0.event == "timeline" && $0.change == "play" }, "the space typed played")
        // One's own line, above the status line, and the prompt closed.
        #expect(try waitFor(10) { let text = try screen(); return text.contains("host: a qui") && !text.contains("say: ") }, "\((try? screen()) ?? "")")

        // Another's line shows by name.
        #expect(joiner.send("say hello from ana") != nil)
        #expect(try waitFor(10) { try screen().contains("ana: hello from ana") }, "\((try? screen()) ?? "")")

        // Esc cancels: nothing is sent, the prompt closes, keys are keys again.
        _ = try tmux(["send-keys", "-t", name, "Enter"])
        _ = try tmux(["send-keys", "-t", name, "-l", "nope"])
        #expect(try waitFor(10) { try screen().contains("say: nope") })
        _ = try tmux(["send-keys", "-t", name, "Escape"])
        #expect(try waitFor(10) { try !screen().contains("say: ") }, "\((try? screen()) ?? "")")
        _ = try tmux(["send-keys", "-t", name, " "])
        #expect(joiner.waitUntil(timeout: 10) { $0.contains { $0.event == "timeline" && $0.change == "play" } })
        #expect(!ChatWatchTests.chats(joiner).map(\.text).contains("nope"))
        // The latency offset's keys (issue 15, item 6): `=` and `-` by 10 ms, on the status line.
        _ = try tmux(["send-keys", "-t", name, "=", "=", "-"])
        #expect(try waitFor(10) { try screen().contains("offset +10 ms") }, "\((try? screen()) ?? "")")
        _ = try tmux(["send-keys", "-t", name, "e"])
        #expect(joiner.waitForExit(timeout: 20) == 3, "\(joiner.standardError)")
    }
}
