import Foundation
import Testing
import TandemNet
@testable import TandemBench

/// The audio bench's analysis on signals made here, whose offsets are known exactly.
@Suite struct AudioSpreadAnalysisTests {
    /// A band-limited signal (64 sinusoids up to 18 kHz at 48 kHz) delayed by `delay` samples:
    /// exactly what a later output of the same sound records.
    static func sinusoids(count: Int, delay: Double, seed: UInt64 = 42) -> [Float] {
        var generator = SeededRandom(seed: seed)
        let parts = (0..<64).map { _ in
            (frequency: 100 + Double(generator.next() % 17_900), phase: Double(generator.next() % 6283) / 1000,
             amplitude: 0.004 + Double(generator.next() % 1000) / 250_000)
        }
        return (0..<count).map { index in
            let t = (Double(index) - delay) / 48_000
            return Float(parts.reduce(0) { $0 + $1.amplitude * sin(2 * Double.pi * $1.frequency * t + $1.phase) })
        }
    }

    @Test func fractionalOffsetReadBackWithinATwentiethOfASample() {
        let reference = Self.sinusoids(count: 14_400, delay: 0)
        let later = Self.sinusoids(count: 14_400, delay: 2.37)
        let result = AudioSpreadAnalysis.windows(channels: [reference, later], members: [0, 1])
        #expect(result.windows.count >= 2)
        for window in result.windows {
            #expect(abs(window.lags[1] - 2.37) < 0.05, "lag \(window.lags[1])")
            #expect(abs(window.spread - 2.37) < 0.05)
            #expect(window.peak > 0.99)
        }
    }

    @Test func earlierChannelGivesNegativeLagAndTheSpreadSpansAllMembers() {
        let a = Self.sinusoids(count: 9_600, delay: 0)
        let earlier = Self.sinusoids(count: 9_600, delay: -1.5)
        let later = Self.sinusoids(count: 9_600, delay: 3.25)
        let result = AudioSpreadAnalysis.windows(channels: [a, earlier, later], members: [0, 1, 2])
        #expect(!result.windows.isEmpty)
        for window in result.windows {
            #expect(abs(window.lags[1] + 1.5) < 0.05)
            #expect(abs(window.lags[2] - 3.25) < 0.05)
            #expect(abs(window.spread - 4.75) < 0.1)
        }
    }

    @Test func silenceAndForeignSoundAreSkippedNotMeasured() {
        var reference = Self.sinusoids(count: 24_000, delay: 0)
        var other = Self.sinusoids(count: 24_000, delay: 1)
        // The second window (4,800…) silent in the reference; the fourth foreign in the other.
        for index in 4_800..<(4_800 + 1_440) { reference[index] = 0 }
        let foreign = Self.sinusoids(count: 24_000, delay: 0, seed: 7)
        for index in 14_400..<(14_400 + 1_440 + 300) { other[index] = foreign[index] }
        let result = AudioSpreadAnalysis.windows(channels: [reference, other], members: [0, 1])
        // The first window too: at the recording's very start there is no room to interpolate.
        #expect(result.skipped == 3)
        #expect(!result.windows.contains { $0.position == 4_800 || $0.position == 14_400 })
        #expect(result.windows.allSatisfy { abs($0.lags[1] - 1) < 0.05 })
    }

    @Test func clickOnsetsFoundWithinASample() {
        let signal = AudioBenchSignal(seconds: 3, seed: 3)
        let samples = signal.samples()
        let onsets = AudioClicks.onsets(samples)
        let expected = signal.clickOnsets()
        #expect(onsets.count == expected.count)
        #expect(expected.count == 6)
        for (found, wanted) in zip(onsets, expected) {
            #expect(abs(found - wanted) < 1, "onset \(found), wanted \(wanted)")
        }
        // The same sound 7 samples later, quieter: its clicks 7 samples later.
        let later = [Float](repeating: 0, count: 7) + samples.map { $0 * 0.8 }
        var detector = AudioClicks.Detector()
        detector.threshold = 0.36
        let spreads = AudioClicks.spreads(reference: onsets, others: [AudioClicks.onsets(later, detector: detector)], within: 240)
        #expect(spreads.count == expected.count)
        #expect(spreads.allSatisfy { abs($0.spread - 7) < 0.5 })
    }

    @Test func aRepeatedClickIsNotPairedWithAnotherChannelsSingleOne() {
        // The reference repeats its first click 400 samples on (as a stretcher may); the other has it once.
        let spreads = AudioClicks.spreads(reference: [1_000, 1_400, 25_000], others: [[1_003, 25_002]], within: 2_400)
        #expect(spreads.map(\.position) == [1_000, 25_000])
        #expect(spreads.map(\.spread) == [3, 2])
    }

    @Test func ownErrorIsTheRecordedInstantLessTheIntendedOne() {
        let source = AudioBenchSignal(seconds: 1, seed: 9).samples()
        let start = 1_000
        let channel = [Float](repeating: 0, count: start) + source
        let origin: Int64 = 5_000_000_000
        let instant = { (index: Int) -> Int64 in origin + Int64((Double(index) * 1e9 / 48_000).rounded()) }
        // The participant meant media 0 for 250 µs before it was recorded; its server expected 100 µs before.
        let intendedStart = instant(start) - 250_000
        let writes = stride(from: 0, to: source.count, by: 480).map { media in
            AudioOutputLog.Write(item: "a.mkv", media: Double(media), intended: intendedStart + Int64(media) * 1_000_000_000 / 48_000,
                                 expected: intendedStart + 150_000 + Int64(media) * 1_000_000_000 / 48_000, frames: 480, rate: 1, correction: 0)
        }
        let log = AudioOutputLog(writes: writes)
        let positions = Array(stride(from: start + 2_400, to: channel.count - 2_000, by: 4_800))
        let errors = AudioSpreadAnalysis.ownErrors(channel: channel, sources: ["a.mkv": source], log: log, positions: positions, instant: instant)
        #expect(errors.count == positions.count)
        for error in errors {
            #expect(abs(error.error - 250_000) < 1_000, "error \(error.error)")
            #expect(abs(error.errorAgainstExpected - 100_000) < 1_000)
            #expect(error.item == "a.mkv")
        }
    }

    @Test func audioLogReadsEveryKindAndCountsWhatItCannot() {
        let text = """
            {"kind":"write","item":"a.mkv","media":4800.5,"intended":1000,"expected":1100,"frames":480,"rate":1,"correction":-12.5}
            {"kind":"snap","at":2000,"error":25000000}
            {"kind":"underrun","at":3000}
            {"kind":"latency","at":4000,"latency":20000000}
            {"kind":"missing","at":4500,"frames":135}
            {"kind":"missing","at":4600,"frames":20}
            {"kind":"priority","at":4700,"realtime":false,"errno":1}
            {"kind":"write","item":"a.mkv"}
            not json
            {"kind":"other"}
            """
        let log = AudioOutputLog(text: text)
        #expect(log.writes == [AudioOutputLog.Write(item: "a.mkv", media: 4800.5, intended: 1000, expected: 1100, frames: 480, rate: 1, correction: -12.5)])
        #expect(log.snaps == [AudioOutputLog.Snap(at: 2000, error: 25_000_000)])
        #expect(log.underruns == [3000])
        #expect(log.latencies == [AudioOutputLog.Latency(at: 4000, latency: 20_000_000)])
        #expect(log.missingFrames == 155)
        #expect(log.realtime == false)
        #expect(AudioOutputLog(text: "").realtime == nil)
        #expect(log.unreadLines == 3)
    }
    /// A long log (a seek back, an item change, a gap) answers its look-ups as a scan of every
    /// write does: the nearest write holding a media position, and the last write whose span
    /// holds an instant.
    @Test func audioLogLookUpsAgreeWithAScanOfEveryWrite() {
        var writes: [AudioOutputLog.Write] = []
        var generator = SeededRandom(seed: 3)
        var instant: Int64 = 1_000_000_000
        var media = 0.0
        var item = "a"
        for index in 0..<3_000 {
            if index == 1_000 { media = 48_000 }          // a seek back, its sound played again
            if index == 1_800 { (item, media) = ("b", 0) } // the next item
            if index == 2_400 { instant += 7_000_000_000 } // a pause
            let frames = 240 + Int(generator.next() % 480)
            writes.append(.init(item: item, media: media, intended: instant, expected: instant + 100, frames: frames, rate: 1, correction: 0))
            let duration = Int64((Double(frames) * 1e9 / 48_000).rounded())
            instant += duration - Int64(generator.next() % 2)
            media += Double(frames)
        }
        let log = AudioOutputLog(writes: writes)
        func scanInstants(item: String, media: Double, near: Int64) -> Int64? {
            var best: AudioOutputLog.Write?
            for write in writes where write.item == item && write.media <= media && media < write.media + max(Double(write.frames), 1)
                && abs(write.intended - near) < (best.map { abs($0.intended - near) } ?? Int64.max) { best = write }
            return best.map { $0.intended + Int64(((media - $0.media) / 48_000 * 1e9).rounded()) }
        }
        func scanPosition(at instant: Int64) -> Double? {
            writes.last { $0.intended <= instant && instant < $0.intended + Int64(Double($0.frames) / 48_000 * 1e9) }
                .map { $0.media + Double(instant - $0.intended) / 1e9 * 48_000 }
        }
        let end = writes.last!.intended + 20_000_000
        for probe in stride(from: Int64(900_000_000), to: end, by: 37_000_000) {
            #expect(log.mediaPosition(at: probe)?.media == scanPosition(at: probe), "at \(probe)")
            for (item, media) in [("a", 50_000.5), ("a", 300_000.0), ("b", 1_000.0), ("b", 200_000.0), ("c", 0.0)] {
                #expect(log.instants(item: item, media: media, near: probe)?.intended == scanInstants(item: item, media: media, near: probe),
                        "\(item) \(media) near \(probe)")
            }
        }
    }
}
