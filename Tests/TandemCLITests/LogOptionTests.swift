import Foundation
import Testing
import TandemTestKit
import TandemHarness

/// `--log FILE`: FFmpeg's messages, silenced otherwise, go to FILE and never to the screen; with
/// `--player mpv`, mpv's log goes there.
@Suite(.timeLimit(.minutes(2))) struct LogOptionProcessTests {
    /// A copy of a sample with 5,000 bytes of noise in its middle: FFmpeg's decoders complain.
    static func corruptCopy(in fixtures: MediaFixtures) throws -> String {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: SampleClip.h264.path)))
        var state: UInt32 = 1
        for index in (bytes.count / 3)..<(bytes.count / 3 + 5_000) {
            state = state &* 1_103_515_245 &+ 12_345
            bytes[index] = UInt8(truncatingIfNeeded: state >> 16)
        }
        let path = fixtures.path("corrupt.mp4")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func ffmpegsMessagesGoToTheLogAndNeverToTheScreen() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let corrupt = try Self.corruptCopy(in: fixtures)
        let log = fixtures.path("tandem.log")
        let logged = try TandemProcess.run(["play", corrupt, "--video", "none", "--audio", "none", "--log", log], timeout: 60)
        #expect(logged.status == 0, "\(logged.standardError)")
        let text = try String(contentsOfFile: log, encoding: .utf8)
        #expect(text.contains(" @ 0x"), "FFmpeg's messages name their context: \(text.prefix(300))")
        #expect(!logged.standardError.contains(" @ 0x"), "\(logged.standardError)")
        // Without --log, nothing of FFmpeg's anywhere.
        let quiet = try TandemProcess.run(["play", corrupt, "--video", "none", "--audio", "none"], timeout: 60)
        #expect(!quiet.standardError.contains(" @ 0x") && !quiet.standardOutput.contains(" @ 0x"), "\(quiet.standardError)")
        // A log that cannot be written: one line, before anything plays.
        let refused = try TandemProcess.run(["play", corrupt, "--log", fixtures.path("missing/dir/tandem.log")])
        #expect(refused.status == 1)
        #expect(refused.standardError.split(separator: "\n").count == 1, "\(refused.standardError)")
        #expect(refused.standardError.hasPrefix("tandem: --log: "), "\(refused.standardError)")
    }

    @Test func mpvsLogGoesToTheLog() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let log = fixtures.path("mpv.log")
        let host = try WatchProcess.host(media: [SampleClip.h264.path],
                                         mpv: .init(socket: fixtures.path("mpv.sock")), arguments: ["--log", log])
        defer { host.kill() }
        #expect(host.waitUntil(timeout: 30) { $0.contains { $0.event == "joined" } }, "\(host.standardError)")
        #expect(host.send("end") != nil)
        host.closeInput()
        #expect(host.waitForExit(timeout: 20) == 0, "\(host.standardError)")
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(text.contains("[cplayer]"), "\(text.prefix(300))")
    }
}
