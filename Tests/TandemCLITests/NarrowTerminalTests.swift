import Foundation
import Testing
import TandemTestKit
import TandemHarness

/// The status line at 80×24 and 120×40: measured against the pane's own width (the host's output
/// goes through `tee`, so the width comes from the terminal its keys come from), cut to it, never
/// wrapped, so that redrawing it four times a second leaves no broken lines behind, while the
/// position grows from one digit of seconds to two.
@Suite struct NarrowTerminalProcessTests {
    @Test(arguments: [(80, 24), (120, 40)])
    func theStatusLineFitsThePaneAndLeavesNothingBehind(width: Int, height: Int) throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let clip = try fixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25", "-t", "30",
                                        "-c:v", "libx264", "-preset", "ultrafast"], output: "clip.mp4")
        let hostLog = fixtures.path("host.out")
        // A long name and a long last change push the line past 120 columns when nothing is cut.
        let tmux = try TmuxSession.start("\(TandemProcess.executablePath) host \(clip) --bind 127.0.0.1 --port 0 --relay-linger 1 "
                                         + "--name someone-with-a-rather-long-name-indeed 2>&1 | tee \(hostLog); sleep 5",
                                         width: width, height: height)
        defer { tmux.kill() }
        #expect(TmuxSession.invite(inLog: hostLog) != nil, "the host printed no invite")
        func screen() throws -> [String] { try tmux.screen().split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }
        func status() throws -> String? { try screen().last { $0.contains("▶") || $0.contains("⏸") } }

        // Five seconds on, then playing past ten: the position gains a digit while it plays.
        try tmux.sendKeys("Right")
        try tmux.sendKeys(" ")
        #expect(try waitFor(20) { try status()?.contains("▶") == true })
        Thread.sleep(forTimeInterval: 6)
        // Nothing of the status line is left behind: the item's length is on it alone. (An
        // event that came meanwhile, a stall on a busy machine, is a sentence of its own.)
        let after = try screen()
        #expect(after.filter { $0.contains("/ 0:30.0") }.count == 1, "\(after.joined(separator: "\n"))")
        let line = try #require(try status())
        #expect(line.contains("▶ 0:1") && line.contains("played from 0:05"), "\(line)")
        // The line uses the width it has: past 80 columns in the wider pane, with the rate that
        // the narrower one leaves out; within it always.
        let used = line.trimmingCharacters(in: .whitespaces).count
        #expect(used <= width, "\(used) columns used of \(width): \(line)")
        if width > 80 {
            #expect(used > 80 && line.contains("1.00x"), "the line was cut to 80 columns in a \(width)-column pane: \(line)")
        }
        try tmux.sendKeys("q")
    }
}
