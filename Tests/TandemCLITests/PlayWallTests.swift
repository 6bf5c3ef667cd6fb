import Foundation
import Testing
import TandemHarness
import TandemTestKit

/// `tandem play A B C --wall`: each file in a built-in player of its own, coordinated by one
/// coordination medium in the process, drawn in its tile of the terminal; bad input is one line.
@Suite struct PlayWallProcessTests {
    /// The frames each file's player presented, from the summary (`  PATH: N frames presented, …`).
    static func presented(_ output: String, _ path: String) -> Int? {
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("  \(path): ") && $0.contains("frames presented") }) else {
            return nil
        }
        return line.dropFirst(path.count + 4).split(separator: " ").first.flatMap { Int($0) }
    }

    @Test func aWallOfThreePlaysEveryFileTogether() throws {
        let paths = [SampleClip.h264BFrames.path, SampleClip.h264.path, SampleClip.vp9.path]
        let run = try TandemProcess.run(["play"] + paths + ["--wall", "--video", "none", "--duration", "1.5"])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.contains("played a wall of 3 on one coordination medium"))
        for path in paths {
            // A second and a half at 24 to 30 frames/s: every screen played, not only the first.
            let frames = try #require(Self.presented(run.standardOutput, path), "\(run.standardOutput)")
            #expect(frames >= 20, "\(path): \(run.standardOutput)")
        }
    }

    @Test func theTerminalShowsEachScreenInItsTile() throws {
        let run = try TandemProcess.run(["play", SampleClip.h264BFrames.path, SampleClip.h264.path, "--wall", "--video", "terminal",
                                         "--duration", "0.5"])
        #expect(run.status == 0, "\(run.standardError)")
        // Not a terminal: 80 columns by 24 rows, two tiles side by side, each placed by its own
        // cursor positions, the left one from column 1 and the right one from column 41.
        #expect(run.standardOutput.contains("\u{1B}[1;1H"))
        #expect(run.standardOutput.contains("\u{1B}[1;41H"))
        #expect(run.standardOutput.contains("\u{1B}[24;1H"))
    }

    @Test func badInputIsOneClearLine() throws {
        let missing = try TandemProcess.run(["play", SampleClip.h264.path, "/nonexistent/film.mkv", "--wall", "--video", "none"])
        #expect(missing.status == 1)
        #expect(missing.standardError.hasPrefix("tandem: /nonexistent/film.mkv: "), "\(missing.standardError)")
        #expect(missing.standardError.split(separator: "\n").count == 1)

        let tooMany = try TandemProcess.run(["play"] + Array(repeating: SampleClip.h264.path, count: 10) + ["--wall"])
        #expect(tooMany.status == 64)
        #expect(tooMany.standardError.contains("at most 9"))

        let log = try TandemProcess.run(["play", SampleClip.h264.path, "--wall", "--presentation-log", "/tmp/x.jsonl"])
        #expect(log.status == 64)
        #expect(log.standardError.contains("cannot be used with --wall"))
    }
}
