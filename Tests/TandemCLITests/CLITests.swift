import Foundation
import Testing
import TandemMedia
import TandemTestKit
import TandemMediaTypes
import TandemHarness

/// The real `tandem` binary, driven as a process.
@Suite struct CLIProcessTests {
    @Test func probePrintsStreamsAsJSON() throws {
        let run = try TandemProcess.run(["probe", SampleClip.vp9.path, "--json"])
        #expect(run.status == 0, "\(run.standardError)")
        let info = try JSONDecoder().decode(MediaInfo.self, from: Data(run.standardOutput.utf8))
        #expect(info.video?.codec == "vp9")
        #expect(info.audio?.codec == "opus")
        #expect(info.video?.width == 320)
        #expect(abs((info.video?.frameRate ?? 0) - 24) < 0.001)

        let text = try TandemProcess.run(["probe", SampleClip.mpeg4.path])
        #expect(text.status == 0)
        #expect(text.standardOutput.contains("mpeg4"))
        #expect(text.standardOutput.contains("320x240"))
        #expect(text.standardOutput.contains("mp3"))
    }

    @Test func playWritesAPresentationLogOfEveryFrame() throws {
        let fixtures = try MediaFixtures()
        defer { fixtures.remove() }
        let log = fixtures.path("presented.jsonl")
        let snapshot = fixtures.path("at-1.png")
        let run = try TandemProcess.run([
            "play", SampleClip.h264.path, "--video", "none", "--rate", "2", "--start", "1",
            "--presentation-log", log, "--snapshot", "1.03:\(snapshot)",
        ])
        #expect(run.status == 0, "\(run.standardError)")
        let records = try PresentationRecord.read(path: log)
        // From 1 s to the end at 25 frames/s: frames 25 to 99, each presented and logged, or
        // dropped late (on a loaded machine) and counted so in the summary.
        let summary = try #require(Self.videoSummary(run.standardOutput), "\(run.standardOutput)")
        #expect(summary.presented + summary.droppedLate == 75, "\(run.standardOutput)")
        #expect(records.count == summary.presented)
        #expect(records.count >= 25, "\(run.standardOutput)")
        #expect(records.first?.pts == 1.0)
        #expect(records.allSatisfy { $0.pts >= 1.0 && $0.pts <= 3.96 })
        #expect(summary.droppedLate > 0 || records.last?.pts == 3.96)
        #expect(records.allSatisfy { $0.item == "h264-aac.mp4" && $0.presentedNanoseconds >= $0.scheduledNanoseconds })
        // At rate 2, frames 40 ms apart in media are 20 ms apart in the schedule.
        let steps = zip(records, records.dropFirst()).map { $1.scheduledNanoseconds - $0.scheduledNanoseconds }
        #expect(steps.allSatisfy { $0 % 20_000_000 == 0 && $0 > 0 })
        #expect(FileManager.default.fileExists(atPath: snapshot))
        #expect(run.standardOutput.contains("frame 1.000 s written"))
    }

    /// The frames presented and dropped late, from `tandem play`'s summary line
    /// (`  video: N frames presented, S stills, D dropped late, …`).
    static func videoSummary(_ output: String) -> (presented: Int, droppedLate: Int)? {
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("  video: ") }) else { return nil }
        let numbers = line.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        guard line.contains("frames presented"), line.contains("dropped late"), numbers.count >= 3 else { return nil }
        return (numbers[0], numbers[2])
    }

    @Test func errorsAreOneClearLineAndAnExitStatus() throws {
        let missing = try TandemProcess.run(["play", "/nonexistent/film.mkv", "--video", "none"])
        #expect(missing.status == 1)
        #expect(missing.standardError.hasPrefix("tandem: cannot open /nonexistent/film.mkv"))
        #expect(missing.standardError.split(separator: "\n").count == 1)

        let badRate = try TandemProcess.run(["play", SampleClip.h264.path, "--rate", "9"])
        #expect(badRate.status == 64)
        #expect(badRate.standardError.contains("--rate must be between 0.25 and 4"))

        let unknown = try TandemProcess.run(["play", SampleClip.h264.path, "--colour", "red"])
        #expect(unknown.status == 64)
        #expect(unknown.standardError.contains("unknown option --colour"))

        let noCommand = try TandemProcess.run(["frobnicate"])
        #expect(noCommand.status == 64)
        #expect(noCommand.standardError.contains("unknown command"))
    }

    @Test func benchDecodeComparesWithFFmpeg() throws {
        let run = try TandemProcess.run(["bench", "decode", SampleClip.h264.path, "--threads", "1", "--runs", "1", "--json"])
        #expect(run.status == 0, "\(run.standardError)")
        struct Result: Decodable {
            struct Side: Decodable { let frames: Int; let seconds: [Double] }
            let tandem: Side
            let ffmpeg: Side?
        }
        let result = try JSONDecoder().decode(Result.self, from: Data(run.standardOutput.utf8))
        #expect(result.tandem.frames == 100)
        #expect(result.tandem.seconds.count == 1)
        let ffmpeg = try #require(result.ffmpeg, "ffmpeg is installed by .ci/run, so the comparison must run")
        #expect(ffmpeg.seconds.count == 1 && ffmpeg.seconds[0] > 0)
    }
}
