import Foundation
import Testing
@testable import TandemBench
import TandemMediaTypes

/// The audio bench's figures from a made-up recording: a group of three channels of one sound,
/// 3 and 1 samples apart, under a timeline that plays and then changes rate.
@Suite struct AudioBenchmarkAnalysisTests {
    @Test func groupSpreadClassifiedByTheTimeline() {
        let source = AudioBenchSignal(seconds: 2, seed: 4).samples()
        let channels = [source, [Float](repeating: 0, count: 3) + source.dropLast(3), [Float](repeating: 0, count: 1) + source.dropLast(1)]
        let placement: Int64 = 10_000_000_000
        let timeline = AudioTimeline(changes: [
            .init(change: "play", instant: placement + 120_000_000, rate: 1), .init(change: "rate 1.5", instant: placement + 1_000_000_000, rate: 1.5),
        ])
        let input = AudioBenchmarkAnalysis.Input(
            channels: channels, recording: RecordingClock(origin: placement, period: 1e9 / 48_000), timeline: timeline, scriptStarted: placement, scriptEnded: placement + 2_000_000_000,
            groups: [(name: "tandem", summary: "", members: [("peer-0", 0), ("peer-1", 1), ("peer-2", 2)], notMeasured: nil),
                     (name: "mpv", summary: "", members: [], notMeasured: "none here")],
            logs: [:], sources: ["a": source])
        let report = AudioBenchmarkAnalysis.analyse(input)
        let group = report.groups[0]
        // 3 samples at 48 kHz: 62.5 µs.
        #expect(group.steady.map { abs($0.p50 - 62.5) < 1 && abs($0.max - 62.5) < 1 } == true)
        // Windows of rate 1 only: those starting from the play (0.12 s) to the rate change (1 s), every
        // 0.1 s; the one at 0.2 s is in the 100 ms after the play.
        #expect(group.windows == 8)
        #expect(group.afterChanges?.count == 1)
        #expect(group.clicks.map { $0.count == 4 && abs($0.p50 - 62.5) < 21 } == true)
        #expect(report.groups[1].notMeasured == "none here")
        #expect(report.changes.map(\.change) == ["play", "rate 1.5"])
        #expect(report.changes[0].largestSpread["tandem"].map { abs($0 - 62.5) < 1 } == true)
        #expect(report.participants.map(\.name) == ["peer-0", "peer-1", "peer-2"])
        let table = AudioBenchmarkTable.render(report)
        #expect(table.contains("| tandem | peer-0, peer-1, peer-2 | 8 (") && table.contains("| mpv |  | not measured: none here |"))
    }

    /// A participant whose pictures come 1 ms after the instants its sound server's timing gives
    /// their sound (which itself runs 50 µs behind the timeline): 950 µs for each picture at rate
    /// 1, and none for the still picture, the picture after the rate change, or the one within
    /// 100 ms of the play.
    @Test func picturesAgainstSoundFromTheLogs() {
        let start: Int64 = 10_000_000_000
        let timeline = AudioTimeline(changes: [
            .init(change: "play", instant: start, rate: 1), .init(change: "rate 1.5", instant: start + 1_000_000_000, rate: 1.5),
        ])
        let log = AudioOutputLog(writes: (0..<100).map { index in
            .init(item: "a", media: Double(index * 480), intended: start + Int64(index) * 10_000_000,
                  expected: start + Int64(index) * 10_000_000 + 50_000, frames: 480, rate: 1, correction: 0)
        })
        let pictures = stride(from: 0.0, to: 1.2, by: 0.04).map { pts in
            PresentationRecord(item: "a", pts: pts, scheduledNanoseconds: start + Int64(pts * 1e9),
                               presentedNanoseconds: start + Int64((pts * 1e9).rounded()) + 1_000_000)
        } + [PresentationRecord(item: "a", pts: 0.5, scheduledNanoseconds: start + 500_000_000, presentedNanoseconds: start + 520_000_000, still: true)]
        let input = AudioBenchmarkAnalysis.Input(channels: [], recording: RecordingClock(origin: start, period: 1e9 / 48_000), timeline: timeline,
                                                 scriptStarted: start, scriptEnded: start + 2_000_000_000, groups: [], logs: ["p": log],
                                                 sources: [:], presentations: ["p": pictures])
        let (values, unpaired) = AudioBenchmarkAnalysis.picturesAfterSound(pictures, log: log, input: input)
        // Pictures at 0.12 s to 0.96 s (0.04 s apart); 0.0 to 0.08 s are within 100 ms of the play
        // and 1.0 s on follow the rate change.
        #expect(values.count == 22)
        #expect(unpaired == 0)
        #expect(values.allSatisfy { abs($0 - 950) < 0.01 })
        // A picture of a position whose sound was never written is counted, not measured.
        let stray = [PresentationRecord(item: "b", pts: 0.5, scheduledNanoseconds: start + 500_000_000, presentedNanoseconds: start + 500_000_000)]
        #expect(AudioBenchmarkAnalysis.picturesAfterSound(stray, log: log, input: input).unpaired == 1)
    }

    @Test func aGatedPlayTakesEffectWhenItsPreRollCompletes() {
        let timeline = AudioTimeline(versions: [
            1: .init(change: "play", instant: 5_000, rate: 1), 2: .init(change: "pre-rolled for v1", instant: 2_000, rate: 1),
            3: .init(change: "pause", instant: 9_000, rate: 0),
        ])
        #expect(timeline.changes == [.init(change: "play", instant: 2_000, rate: 1), .init(change: "pause", instant: 9_000, rate: 0)])
    }

    @Test func timelineFromTheHostsEventsOnTheMachinesClock() {
        let timeline = AudioTimeline(changes: [
            .init(change: "pause", instant: 3_000, rate: 0), .init(change: "play", instant: 1_000, rate: 1),
        ])
        #expect(timeline.rate(at: 500) == 0)
        #expect(timeline.rate(at: 1_000) == 1)
        #expect(timeline.rate(at: 2_999) == 1)
        #expect(timeline.rate(at: 3_000) == 0)
        #expect(timeline.change(near: 1_050, span: 10, within: 100)?.change == "play")
        #expect(timeline.change(near: 1_200, span: 10, within: 100) == nil)
        #expect(timeline.change(near: 950, span: 60, within: 100)?.change == "play")
    }
}
