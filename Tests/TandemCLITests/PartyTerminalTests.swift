#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TandemTestKit

/// Issue 15, items 1 and 2, at a real terminal (tmux): `q` on the host gives its terminal back
/// (the shell after it runs, the terminal out of raw mode) while a joiner watches and controls on;
/// `SIGTERM` to a host at a terminal leaves the same way. No relay is left behind.
@Suite(.serialized, .timeLimit(.minutes(3))) struct PartyTerminalTests {
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

    /// How the host leaves.
    enum Leaving { case key, terminate }

    @Test(arguments: [Leaving.key, .terminate])
    func theHostLeavesAndGetsItsTerminalBack(_ leaving: Leaving) throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let runtime = fixtures.path("run")
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let clip = SampleClip.h264BFrames.path
        let name = "tandem-party-\(UUID().uuidString.prefix(8))"
        let hostLog = fixtures.path("host.out")
        // After the host: the shell reports its status and the terminal's mode, then waits.
        let script = "env XDG_RUNTIME_DIR=\(runtime) \(TandemProcess.executablePath) host \(clip) --bind 127.0.0.1 --port 0 --name host "
            + "2>&1 | tee \(hostLog); echo HOST-EXITED; stty -a | tr ' ;' '\\n\\n' | grep -x -e icanon -e echo | tr '\\n' ' '; echo; sleep 30"
        _ = try tmux(["new-session", "-d", "-s", name, "-x", "200", "-y", "12", script])
        defer { _ = try? tmux(["kill-session", "-t", name]) }
        #expect(waitFor(20) { (try? String(contentsOfFile: hostLog, encoding: .utf8))?.contains("tandem://") == true })
        let invite = try #require(try String(contentsOfFile: hostLog, encoding: .utf8)
            .split(whereSeparator: { $0 == "\n" || $0 == "\r" || $0 == " " }).first { $0.hasPrefix("tandem://") }.map(String.init))
        let records = (try? FileManager.default.contentsOfDirectory(atPath: runtime + "/tandem"))?.filter { $0.hasSuffix(".json") } ?? []
        let record = try #require(records.first.flatMap { FileManager.default.contents(atPath: runtime + "/tandem/" + $0) })
        let relay = try #require(((try JSONSerialization.jsonObject(with: record)) as? [String: Any])?["pid"] as? NSNumber).int32Value

        let joiner = try WatchProcess(executable: TandemProcess.executablePath, arguments: ["join", invite, clip, "--name", "ana", "--events", "json"],
                                      name: "ana", acceptsCommands: true)
        defer { joiner.kill() }
        func screen() throws -> String { try tmux(["capture-pane", "-t", name, "-p"]) }
        #expect(try waitFor(20) { try screen().contains("ana, host") })

        switch leaving {
        case .key:
            _ = try tmux(["send-keys", "-t", name, "q"])
        case .terminate:
            let host = try #require(PartyTests.process(commandLineContaining: "host", and: clip), "no host process")
            kill(host, SIGTERM)
        }
        // The terminal is the shell's again, in its cooked mode (canonical input, echo).
        let exited = try waitFor(15) { try screen().contains("HOST-EXITED") }
        let cooked = try waitFor(5) { try screen().contains("icanon echo") }
        let shown = try screen()
        #expect(exited && cooked, "\(shown)")
        // The joiner goes on: it sees the host go, and controls playback alone.
        #expect(joiner.waitUntil(timeout: 10) { $0.contains { $0.event == "participant-left" && $0.name == "host" } })
        #expect(joiner.send("play") != nil)
        #expect(joiner.waitUntil(timeout: 10) { $0.contains { $0.change == "play" && $0.by == "ana" } }, "\(joiner.lines.suffix(4))")
        #expect(PartyTests.isRunning(relay))
        #expect(joiner.send("leave") != nil)
        #expect(joiner.waitForExit(timeout: 20) == 0, "\(joiner.standardError)")
        PartyTests.expectGone(relay, within: 20, "the relay")
    }
}
