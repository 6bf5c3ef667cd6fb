import Foundation
import Testing
import TandemTestKit
import TandemHarness

/// `tandem host --player mpv` shows on mpv's screen what its terminal says: who did what and the
/// chat, by name. mpv 0.35 cannot read its OSD back, so the `show-text` commands mpv ran are read
/// from its own log (`--log`, with `cplayer` at trace level, where mpv writes each command it
/// runs), and mpv's window is grabbed under a virtual display.
@Suite(.serialized, .timeLimit(.minutes(2))) struct MpvOnScreenWatchProcessTests {
    @Test func anotherParticipantsPauseAndChatAppearOnMpvsScreenByName() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let clip = SampleClip.directory + "/watch-together.mp4"
        let log = fixtures.path("mpv.log")
        // Sentences (no --json): the terminal's and mpv's screen's.
        let host = try WatchProcess(executable: TandemProcess.executablePath,
                                    arguments: ["host", clip, "--bind", "127.0.0.1", "--port", "0", "--name", "host", "--player", "mpv",
                                                "--mpv-args", "--vo=null --ao=null --msg-level=cplayer=trace", "--log", log],
                                    name: "host", acceptsCommands: true)
        defer { host.kill() }
        let invite = try #require(host.invite(), "no invite: \(host.standardError)")
        let joiner = try WatchProcess.join(invite: invite, media: [clip], name: "ana")
        defer { joiner.kill() }
        #expect(joiner.waitUntilJoined(), "\(joiner.standardError)")
        func shown() -> [String] {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n")
                .filter { $0.contains("Run command: show-text") }.map(String.init)
        }
        #expect(joiner.waitUntil(timeout: 20) { $0.contains { $0.event == "participant-joined" && $0.name == "host" } })
        #expect(joiner.send("play") != nil)
        #expect(joiner.waitUntil(timeout: 20) { $0.contains { $0.change == "play" } })
        #expect(joiner.send("say hi from ana") != nil)
        #expect(joiner.send("pause") != nil)
        #expect(waitFor(20) { shown().contains { $0.contains("ana paused at 0:") } }, "\(shown())")
        #expect(waitFor(20) { shown().contains { $0.contains("ana: hi from ana") } }, "\(shown())")
        #expect(shown().contains { $0.contains("ana played from 0:00") }, "\(shown())")
        // Names, never identifiers.
        let uuid = try NSRegularExpression(pattern: "[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-")
        #expect(shown().allSatisfy { uuid.firstMatch(in: $0, range: NSRange($0.startIndex..., in: $0)) == nil }, "\(shown())")
        #expect(host.send("end") != nil)
        host.closeInput()
        #expect(host.waitForExit(timeout: 20) == 0, "\(host.standardError)")
    }

    /// mpv's window under a virtual display, grabbed (FFmpeg's `x11grab`, in grey) while another
    /// participant's pause is on mpv's screen and once it has gone: the same still frame, but for
    /// the text. mpv's own seek bar and messages are off (`--osd-bar=no --osd-level=0`; a
    /// `show-text` still shows), so that only Tandem's text can differ.
    @Test func anotherParticipantsPauseIsSeenInMpvsWindow() throws {
        let display = try XvfbDisplay.start()
        defer { display.stop() }
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let clip = SampleClip.directory + "/watch-together.mp4"
        let host = try WatchProcess(executable: TandemProcess.executablePath,
                                    arguments: ["host", clip, "--bind", "127.0.0.1", "--port", "0", "--name", "host", "--player", "mpv",
                                                "--mpv-args", "--vo=x11 --ao=null --osd-bar=no --osd-level=0"],
                                    name: "host", acceptsCommands: true, environment: display.environment)
        defer { host.kill() }
        let invite = try #require(host.invite(), "no invite: \(host.standardError)")
        let joiner = try WatchProcess.join(invite: invite, media: [clip], name: "ana")
        defer { joiner.kill() }
        #expect(joiner.waitUntil(timeout: 20) { $0.contains { $0.event == "participant-joined" && $0.name == "host" } },
                "\(joiner.standardError)")
        #expect(joiner.send("play") != nil)
        #expect(joiner.waitUntil(timeout: 20) { $0.contains { $0.change == "play" } })
        Thread.sleep(forTimeInterval: 1)
        #expect(joiner.send("pause") != nil)
        #expect(waitFor(20) { host.lines.contains { $0.contains("ana paused at") } }, "\(host.lines)")
        // mpv has paused and landed on the group's position; the text lasts 5 s.
        Thread.sleep(forTimeInterval: 0.8)
        let shown = try grab(display, fixtures, "shown.gray")
        Thread.sleep(forTimeInterval: 5.5)
        let gone = try grab(display, fixtures, "gone.gray")
        let still = try grab(display, fixtures, "still.gray")
        #expect(Self.differing(gone, still) == 0, "the paused picture itself changed")
        // The sentence's glyphs: hundreds of pixels (about 900 measured for a line like it).
        #expect(Self.differing(shown, gone) > 200, "no text on mpv's screen: \(Self.differing(shown, gone)) pixels differ")
        #expect(host.send("end") != nil)
        host.closeInput()
        #expect(host.waitForExit(timeout: 20) == 0, "\(host.standardError)")
    }

    /// The virtual display's screen, one grey byte a pixel.
    func grab(_ display: XvfbDisplay, _ fixtures: MediaFixtures, _ name: String) throws -> [UInt8] {
        let path = try fixtures.ffmpeg(["-f", "x11grab", "-video_size", "640x480", "-i", ":\(display.number)", "-frames:v", "1",
                                        "-pix_fmt", "gray", "-f", "rawvideo"], output: name)
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// How many pixels of two grabs differ by more than a sixth of the range.
    static func differing(_ first: [UInt8], _ second: [UInt8]) -> Int {
        guard first.count == second.count else { return max(first.count, second.count) }
        return zip(first, second).filter { abs(Int($0) - Int($1)) > 40 }.count
    }
}
