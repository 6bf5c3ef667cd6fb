import Foundation
import Testing
import TandemTestKit
import TandemHarness

/// The watch-together terminal interface as a person uses it: `tandem host` in a real terminal
/// (tmux), keys sent to it (space, `]`, Backspace, →, `>`, `<`, `9`, `0`, `m`, `p`, `?`, `e`), the
/// status line read back, and a joiner that follows.
@Suite(.serialized) struct TerminalInterfaceProcessTests {
    @Test func keysDrivePlaybackAndTheStatusLineShowsIt() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let clip = try fixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25", "-t", "30",
                                        "-c:v", "libx264", "-preset", "ultrafast"], output: "clip.mp4")
        let second = try fixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25", "-t", "30",
                                          "-c:v", "libx264", "-preset", "ultrafast"], output: "second.mp4")
        let hostLog = fixtures.path("host.out")
        let tmux = try TmuxSession.start("\(TandemProcess.executablePath) host \(clip) \(second) --bind 127.0.0.1 --port 0 --name host 2>&1 | tee \(hostLog); sleep 5")
        defer { tmux.kill() }
        let invite = try #require(TmuxSession.invite(inLog: hostLog), "the host printed no invite")

        let joiner = Process()
        joiner.executableURL = URL(fileURLWithPath: TandemProcess.executablePath)
        joiner.arguments = ["join", invite, clip, second, "--name", "ana", "--events", "json"]
        let joinerOutput = fixtures.path("ana.out")
        _ = FileManager.default.createFile(atPath: joinerOutput, contents: nil)
        joiner.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: joinerOutput))
        joiner.standardInput = Pipe()
        try joiner.run()
        defer { if joiner.isRunning { joiner.terminate() } }
        func anaSaw(_ text: String) -> Bool { anaCount(text) > 0 }
        func anaCount(_ text: String) -> Int {
            ((try? String(contentsOfFile: joinerOutput, encoding: .utf8)) ?? "").components(separatedBy: text).count - 1
        }
        func screen() throws -> String { try tmux.screen() }

        #expect(try waitFor(20) { try screen().contains("ana, @host") })
        try tmux.sendKeys(" ")
        #expect(waitFor(10) { anaSaw(#""change":"play""#) })
        #expect(try waitFor(10) { let text = try screen(); return text.contains("▶") && text.contains("1.00x") })
        try tmux.sendKeys("]")
        #expect(waitFor(10) { anaSaw(#""change":"rate 1.1""#) })
        #expect(try waitFor(10) { try screen().contains("1.10x") })
        try tmux.sendKeys("BSpace")
        // Rate 1 again is a play, the second Ana sees.
        #expect(waitFor(10) { anaCount(#""change":"play""#) >= 2 })
        #expect(try waitFor(10) { try screen().contains("1.00x") })
        try tmux.sendKeys("Right")
        #expect(waitFor(10) { anaSaw(#""change":"seek"#) })
        // `>` and `<`: the queue's next item, then the previous one, for everyone.
        try tmux.sendKeys(">")
        #expect(waitFor(10) { anaSaw(#""identifier":"second.mp4","index":1"#) })
        #expect(try waitFor(10) { try screen().contains("item 2 of 2") }, "\((try? screen()) ?? "")")
        try tmux.sendKeys("<")
        #expect(waitFor(10) { anaSaw(#""identifier":"clip.mp4","index":0"#) })
        // The sound's keys are this participant's alone, and the line shows their level.
        try tmux.sendKeys("9")
        #expect(try waitFor(10) { try screen().contains("vol 90%") })
        try tmux.sendKeys("m")
        #expect(try waitFor(10) { let text = try screen(); return text.contains("muted") && !text.contains("vol 90%") })
        try tmux.sendKeys("m")
        try tmux.sendKeys("0")
        try tmux.sendKeys("0")
        #expect(try waitFor(10) { let text = try screen(); return text.contains("vol 110%") && !text.contains("muted") })
        #expect(!anaSaw("volume") && !anaSaw("mute"))
        try tmux.sendKeys("p")
        // Paused, and said so. Two item changes in a row can leave a player catching up, and
        // the group then waits for it, paused or not: the line shows ⏳ and who is waited for.
        #expect(try waitFor(10) {
            let text = try screen()
            return text.contains("host paused at ") && text.contains("0.00x") && (text.contains("⏸") || text.contains("⏳"))
        }, "\((try? screen()) ?? "")")
        // The keys on request; one `e` only asks, the second ends.
        try tmux.sendKeys("?")
        #expect(try waitFor(10) { try screen().contains("for everyone:") })
        try tmux.sendKeys("e")
        #expect(try waitFor(10) { try screen().contains("press e again within 3 s") })
        #expect(!anaSaw("ended the session"))
        try tmux.sendKeys("e")
        #expect(waitFor(10) { anaSaw("host ended the session") })
        #expect(waitFor(10) { !joiner.isRunning })
        // Ended by the host: the joiner says so and exits 3.
        if !joiner.isRunning { #expect(joiner.terminationStatus == 3) }
    }
}
