import Foundation
import Testing
import TandemTestKit
import TandemHarness

/// The status line at an 80-column terminal: cut to the width, never wrapped, so that redrawing
/// it four times a second leaves no broken lines behind.
@Suite(.serialized) struct NarrowTerminalProcessTests {
    @Test func theStatusLineFitsEightyColumnsAndLeavesNothingBehind() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let clip = try fixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25", "-t", "30",
                                        "-c:v", "libx264", "-preset", "ultrafast"], output: "clip.mp4")
        let hostLog = fixtures.path("host.out")
        // A long name and a long last change push the line past 80 columns when nothing is cut.
        let tmux = try TmuxSession.start("\(TandemProcess.executablePath) host \(clip) --bind 127.0.0.1 --port 0 "
                                         + "--name someone-with-a-rather-long-name 2>&1 | tee \(hostLog); sleep 5", width: 80, height: 12)
        defer { tmux.kill() }
        #expect(TmuxSession.invite(inLog: hostLog) != nil, "the host printed no invite")
        func screen() throws -> [String] { try tmux.screen().split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }
        func status() throws -> String? { try screen().last { $0.contains("▶") || $0.contains("⏸") } }

        try tmux.sendKeys(" ")
        #expect(try waitFor(20) { try status()?.contains("▶") == true })
        let before = try screen().filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }.count
        // Twelve redraws or more.
        Thread.sleep(forTimeInterval: 3)
        let after = try screen().filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        #expect(after.count == before, "\(after.joined(separator: "\n"))")
        let line = try #require(try status())
        #expect(line.contains("1.00x"), "\(line)")
        try tmux.sendKeys("q")
    }
}
