import Foundation
import Testing
import TandemTestKit

/// A joiner whose display name carries escape sequences, seen by the host at a real terminal
/// (tmux): the status line shows the name's printable part, and the terminal obeys nothing of it.
@Suite(.serialized, .timeLimit(.minutes(2))) struct HostileNameTerminalTests {
    /// Runs a tmux command and returns what it printed (through a file: see `TerminalInterfaceTests`).
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

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux"), "needs tmux"))
    func theStatusLineShowsAHostileNameWithoutObeyingIt() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let clip = SampleClip.h264.path
        let name = "tandem-test-\(UUID().uuidString.prefix(8))"
        let hostLog = fixtures.path("host.out")
        _ = try tmux(["new-session", "-d", "-s", name, "-x", "200", "-y", "12",
                      "\(TandemProcess.executablePath) host \(clip) --bind 127.0.0.1 --port 0 --name host 2>&1 | tee \(hostLog); sleep 5"])
        defer { _ = try? tmux(["kill-session", "-t", name]) }
        _ = try tmux(["select-pane", "-t", name, "-T", "tandem-title"])
        #expect(waitFor(20) { (try? String(contentsOfFile: hostLog, encoding: .utf8))?.contains("tandem://") == true })
        let invite = try #require(try String(contentsOfFile: hostLog, encoding: .utf8)
            .split(whereSeparator: { $0 == "\n" || $0 == "\r" || $0 == " " }).first { $0.hasPrefix("tandem://") }.map(String.init))

        // Retitle the window, clear the screen, and write a fake line, all from a name.
        let hostile = "mal\u{1B}]2;pwned\u{7}lory\u{1B}[2J\u{1B}[H\u{1B}[1;31mFAKE"
        let joiner = try WatchProcess.join(invite: invite, file: clip, arguments: ["--name", hostile, "--events", "json"], name: "mallory")
        defer { joiner.kill() }
        func screen() throws -> String { try tmux(["capture-pane", "-t", name, "-p"]) }
        #expect(try waitFor(20) { try screen().contains("host, malloryFAKE") }, "\((try? screen()) ?? "")")
        #expect(try tmux(["display-message", "-p", "-t", name, "#{pane_title}"]).trimmingCharacters(in: .whitespacesAndNewlines)
            == "tandem-title")
        // Nothing cleared the screen: the invite printed at the start is still on it.
        #expect(try screen().contains("tandem://"))
        _ = try tmux(["send-keys", "-t", name, "e"])
        #expect(joiner.waitForExit(timeout: 20) == 3, "\(joiner.standardError)")
    }
}
