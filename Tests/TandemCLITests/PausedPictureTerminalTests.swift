import Foundation
import Testing
import TandemTestKit
import TandemHarness

/// The picture in the terminal follows the window's size while the party is paused, as it does
/// while it plays.
@Suite(.serialized) struct PausedPictureTerminalProcessTests {
    @Test func aPausedPictureIsDrawnAgainWhenTheWindowGrows() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let clip = try fixtures.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25", "-t", "30",
                                        "-c:v", "libx264", "-preset", "ultrafast"], output: "clip.mp4")
        let hostLog = fixtures.path("host.out")
        let tmux = try TmuxSession.start("\(TandemProcess.executablePath) host \(clip) --bind 127.0.0.1 --port 0 --name ana "
                                         + "--video terminal --audio none 2>&1 | tee \(hostLog); sleep 5", width: 40, height: 20)
        defer { tmux.kill() }
        #expect(TmuxSession.invite(inLog: hostLog) != nil, "the host printed no invite")
        // The picture's width in cells: the most half-block cells on one row.
        func pictureWidth() throws -> Int {
            try tmux.screen().split(separator: "\n").map { $0.filter { $0 == "▀" }.count }.max() ?? 0
        }
        let drawn = try waitFor(20) { try pictureWidth() > 0 }
        #expect(drawn, "no picture: \((try? tmux.screen()) ?? "")")
        // The party is joined (its keys' hint is shown) and, as every party starts, paused.
        let joined = try waitFor(20) { try tmux.screen().contains("space play") || tmux.screen().contains("space pause") }
        #expect(joined, "no keys' hint: \((try? tmux.screen()) ?? "")")
        // The first picture settled.
        Thread.sleep(forTimeInterval: 2)
        let small = try pictureWidth()
        #expect(small <= 40)
        // Paused (a party starts paused): the window grows, and the picture with it.
        try tmux.resize(width: 120, height: 40)
        let grew = try waitFor(10) { try pictureWidth() > small + 20 }
        let shown = (try? tmux.screen()) ?? ""
        #expect(grew, "the picture stayed \((try? pictureWidth()) ?? 0) cells wide: \(shown)")
        try tmux.sendKeys("q")
    }
}
