import Foundation
import Testing
import TandemTestKit
import TandemHarness

/// `tandem host --player mpv` shows on mpv's screen what its terminal says: who did what and the
/// chat, by name. mpv 0.35 cannot read its OSD back, so the `show-text` commands mpv ran are read
/// from its own log (`--log`, with `cplayer` at trace level, where mpv writes each command it runs).
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
}
