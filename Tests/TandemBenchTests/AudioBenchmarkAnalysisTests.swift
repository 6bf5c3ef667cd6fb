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

    /// Three outputs 0, 3 and 1 samples late (0, 62.5 and 20.8 µs) whose logs intended the same
    /// media 0, 40 and 0 µs apart: the clocks' own spread is 40 µs, and what the outputs added
    /// to it is 22.5 µs (62.5 less 40 for the second; 20.8 for the third).
    @Test func steadySpreadTakenApartIntoTheClocksAndTheOutputs() {
        let source = AudioBenchSignal(seconds: 2, seed: 4).samples()
        let channels = [source, [Float](repeating: 0, count: 3) + source.dropLast(3), [Float](repeating: 0, count: 1) + source.dropLast(1)]
        let placement: Int64 = 10_000_000_000
        let timeline = AudioTimeline(changes: [.init(change: "play", instant: placement, rate: 1)])
        let log = { (offset: Int64) in
            AudioOutputLog(writes: stride(from: 0, to: source.count, by: 480).map { media in
                let intended = placement + Int64((Double(media) * 1e9 / 48_000).rounded()) + offset
                return .init(item: "a", media: Double(media), intended: intended, expected: intended, frames: 480, rate: 1, correction: 0)
            })
        }
        let input = AudioBenchmarkAnalysis.Input(
            channels: channels, recording: RecordingClock(origin: placement, period: 1e9 / 48_000), timeline: timeline,
            scriptStarted: placement, scriptEnded: placement + 2_000_000_000,
            groups: [(name: "tandem", summary: "", members: [("peer-0", 0), ("peer-1", 1), ("peer-2", 2)], notMeasured: nil)],
            logs: ["peer-0": log(0), "peer-1": log(40_000), "peer-2": log(0)], sources: ["a": source])
        let group = AudioBenchmarkAnalysis.analyse(input).groups[0]
        #expect((group.clocksSteady?.count ?? 0) >= 15)
        #expect(group.clocksSteady?.count == group.steady?.count)
        #expect(group.clocksSteady.map { abs($0.min - 40) < 0.01 && abs($0.max - 40) < 0.01 } == true)
        #expect(group.outputsSteady.map { abs($0.min - 22.5) < 0.5 && abs($0.max - 22.5) < 0.5 } == true)
        #expect(group.steady.map { abs($0.p50 - 62.5) < 0.5 } == true)
        let table = AudioBenchmarkTable.render(AudioBenchmarkAnalysis.analyse(input))
        #expect(table.contains("the steady spread taken apart"))
        #expect(table.contains("audio spread p99 ≤ 50 µs (the clocks' own p99 40.0 µs): MISSED"))
    }

    /// Without every member's log there is nothing to take apart.
    @Test func noClocksSpreadWithoutEveryMembersLog() {
        let source = AudioBenchSignal(seconds: 1, seed: 4).samples()
        let placement: Int64 = 10_000_000_000
        let log = AudioOutputLog(writes: [.init(item: "a", media: 0, intended: placement, expected: placement, frames: 48_000, rate: 1, correction: 0)])
        let input = AudioBenchmarkAnalysis.Input(
            channels: [source, source], recording: RecordingClock(origin: placement, period: 1e9 / 48_000),
            timeline: AudioTimeline(changes: [.init(change: "play", instant: placement, rate: 1)]),
            scriptStarted: placement, scriptEnded: placement + 1_000_000_000,
            groups: [(name: "mpv", summary: "", members: [("peer-3", 0), ("peer-4", 1)], notMeasured: nil)],
            logs: ["peer-3": log], sources: ["a": source])
        let group = AudioBenchmarkAnalysis.analyse(input).groups[0]
        #expect(group.steady != nil)
        #expect(group.clocksSteady == nil && group.outputsSteady == nil)
    }

    @Test(arguments: [(nil, 50.0), (30.0, 50.0), (50.0, 50.0), (50.5, 70.5), (64.0, 84.0)] as [(Double?, Double)])
    func spreadBoundIsFiftyOrTwentyAboveLargerClocks(clocks: Double?, bound: Double) {
        #expect(AudioSpreadAnalysis.spreadBound(clocksP99: clocks) == bound)
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
