import Foundation
import Testing
import TandemTestKit

/// The watch-together terminal interface as a person uses it: `tandem host` in a real terminal
/// (tmux), keys sent to it, the status line read back, and a joiner that follows.
@Suite(.serialized) struct TerminalInterfaceTests {
    /// Runs a tmux command and returns what it printed. Its output goes to a file, not a pipe:
    /// the tmux server that `new-session` starts would hold a pipe open, and reading it to its
    /// end would never finish.
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
        // Bounded: a tmux client returns at once (`new-session -d` leaves its server behind).
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

    @Test func keysDrivePlaybackAndTheStatusLineShowsIt() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let clip = try fixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25", "-t", "30",
                                        "-c:v", "libx264", "-preset", "ultrafast"], output: "clip.mp4")
        let name = "tandem-test-\(UUID().uuidString.prefix(8))"
        let hostLog = fixtures.path("host.out")
        _ = try tmux(["new-session", "-d", "-s", name, "-x", "200", "-y", "12",
                      "\(TandemProcess.executablePath) host \(clip) --bind 127.0.0.1 --port 0 --name host 2>&1 | tee \(hostLog); sleep 5"])
        defer { _ = try? tmux(["kill-session", "-t", name]) }
        #expect(waitFor(20) { (try? String(contentsOfFile: hostLog, encoding: .utf8))?.contains("tandem://") == true })
        let invite = try #require(try String(contentsOfFile: hostLog, encoding: .utf8)
            .split(whereSeparator: { $0 == "\n" || $0 == "\r" || $0 == " " }).first { $0.hasPrefix("tandem://") }.map(String.init))

        let joiner = Process()
        joiner.executableURL = URL(fileURLWithPath: TandemProcess.executablePath)
        joiner.arguments = ["join", invite, clip, "--name", "ana", "--events", "json"]
        let joinerOutput = fixtures.path("ana.out")
        _ = FileManager.default.createFile(atPath: joinerOutput, contents: nil)
        joiner.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: joinerOutput))
        joiner.standardInput = Pipe()
        try joiner.run()
        defer { if joiner.isRunning { joiner.terminate() } }
        func anaSaw(_ text: String) -> Bool { (try? String(contentsOfFile: joinerOutput, encoding: .utf8))?.contains(text) == true }
        func screen() throws -> String { try tmux(["capture-pane", "-t", name, "-p"]) }

        #expect(try waitFor(20) { try screen().contains("ana, host") })
        _ = try tmux(["send-keys", "-t", name, " "])
        #expect(waitFor(10) { anaSaw(#""change":"play""#) })
        #expect(try waitFor(10) { let text = try screen(); return text.contains("▶") && text.contains("1.00x") })
        _ = try tmux(["send-keys", "-t", name, "]"])
        #expect(waitFor(10) { anaSaw(#""change":"rate 1.1""#) })
        #expect(try waitFor(10) { try screen().contains("1.10x") })
        _ = try tmux(["send-keys", "-t", name, "Right"])
        #expect(waitFor(10) { anaSaw(#""change":"seek"#) })
        _ = try tmux(["send-keys", "-t", name, " "])
        #expect(try waitFor(10) { let text = try screen(); return text.contains("⏸") && text.contains("host: pause") })
        _ = try tmux(["send-keys", "-t", name, "e"])
        #expect(waitFor(10) { anaSaw("host ended the session") })
        #expect(waitFor(10) { !joiner.isRunning })
        // Ended by the host: the joiner says so and exits 3.
        if !joiner.isRunning { #expect(joiner.terminationStatus == 3) }
    }
}
