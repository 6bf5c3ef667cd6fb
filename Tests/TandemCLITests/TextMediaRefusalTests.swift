import Foundation
import Testing
import TandemTestKit
import TandemHarness

/// A text file named as media (on the command line or in a playlist) is refused before anything
/// starts, with one line: no relay is started, nothing is served, nothing is handed to mpv.
@Suite struct TextMediaRefusalProcessTests {
    @Test("host, join and play refuse a .txt, alone or in an .m3u8 list, with one line", arguments: ["builtin", "mpv"])
    func refused(player: String) throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let text = try fixtures.write("notes.txt", Array(String(repeating: "not a movie\n", count: 100).utf8))
        let list = try fixtures.write("party.m3u8", Array("#EXTM3U\n\(SampleClip.h264.path)\nnotes.txt\n".utf8))
        let line = "tandem: \(text) is not a supported media container (FFmpeg would read it as 'tty')"
        for arguments in [["host", list, "--bind", "127.0.0.1", "--port", "0", "--player", player],
                          ["host", text, "--bind", "127.0.0.1", "--port", "0", "--player", player],
                          ["join", "tandem://127.0.0.1:1/400da221-e2ff-443f-a3c6-5de1c6b01483?k=pFUlHzmR_sLoyKVkjB2QQXCATgHY20JSQHkPEruawfY", list, "--player", player]] {
            let run = try TandemProcess.run(arguments, timeout: 30)
            #expect(run.status == 1, "\(arguments): \(run.standardError)")
            #expect(run.standardError.split(separator: "\n").map(String.init) == [line], "\(arguments): \(run.standardError)")
            #expect(!run.standardOutput.contains("tandem://"), "\(arguments): \(run.standardOutput)")
        }
        let play = try TandemProcess.run(["play", text, "--video", "none"])
        #expect(play.status == 1)
        #expect(play.standardError.hasPrefix("tandem: \(text) is not a supported media container"), "\(play.standardError)")
    }
}
