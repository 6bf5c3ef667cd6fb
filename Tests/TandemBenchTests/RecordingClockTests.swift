import Testing
@testable import TandemBench

/// The recording's clock fitted from its file's growth: growth made up from a sink whose clock
/// is known, seen late by a reader that polls and a writer that delivers in blocks.
@Suite struct RecordingClockTests {
    static let nominal = 1e9 / 48_000

    /// A sink whose frames come every `period` ns from `origin`, delivered in blocks of `block`
    /// frames, each seen by a reader polling every millisecond with a pseudo-random delay of up
    /// to `lateness` ns; `extra` frames passed on twice at `stepAt` (a rewind).
    static func growth(origin: Int64, period: Double, seconds: Double, block: Int = 960, lateness: Int64 = 3_000_000,
                       stepAt: Int64? = nil, extra: Int = 0) -> [(instant: Int64, frames: Int)] {
        var generator = AudioBenchSignal.SplitMix(seed: 7)
        var result: [(instant: Int64, frames: Int)] = []
        var frames = 0, added = 0
        while Double(frames) * period < seconds * 1e9 {
            frames += block
            var rendered = origin + Int64(Double(frames) * period)
            if let stepAt, rendered >= stepAt, added == 0 { added = extra }
            rendered -= Int64(Double(added) * period)
            let seen = rendered + Int64(generator.next() % UInt64(lateness))
            if let last = result.last, seen <= last.instant { continue }
            result.append((seen, frames))
        }
        return result
    }

    @Test func aSinkFastBy165PPMIsFittedToAFractionOfAPPM() throws {
        let period = Self.nominal / (1 + 165e-6)
        let clock = try #require(RecordingClock.fit(growth: Self.growth(origin: 5_000_000_000, period: period, seconds: 60),
                                                    nominalPeriod: Self.nominal))
        #expect(abs(clock.ppm(nominalPeriod: Self.nominal) - 165) < 0.5)
        // Frame 0 lies on the line beneath every observation: within the least lateness of it.
        #expect(abs(clock.origin - 5_000_000_000) < 200_000)
        // Late in the run the placement is still within a fraction of a millisecond.
        let late = 48_000.0 * 55
        #expect(abs(clock.instant(ofFrame: late) - (5_000_000_000 + Int64(late * period))) < 200_000)
    }

    @Test func theNominalRateIsNotMistakenForAnother() throws {
        let clock = try #require(RecordingClock.fit(growth: Self.growth(origin: 1_000_000, period: Self.nominal, seconds: 30, block: 441),
                                                    nominalPeriod: Self.nominal))
        #expect(abs(clock.ppm(nominalPeriod: Self.nominal)) < 1)
    }

    @Test func aRewindAtABreakDoesNotBendThePeriod() throws {
        let period = Self.nominal / (1 - 80e-6)
        let origin: Int64 = 2_000_000_000
        let step = origin + 20_000_000_000
        let growth = Self.growth(origin: origin, period: period, seconds: 50, stepAt: step, extra: 130)
        let withBreak = try #require(RecordingClock.fit(growth: growth, breaks: [step], nominalPeriod: Self.nominal))
        #expect(abs(withBreak.ppm(nominalPeriod: Self.nominal) + 80) < 0.5)
        // Without the break, the step of 130 frames (2.7 ms) tilts the line by ppm: over a stretch
        // of 30 s, tens of microseconds.
        let without = try #require(RecordingClock.fit(growth: growth, nominalPeriod: Self.nominal))
        #expect(abs(without.ppm(nominalPeriod: Self.nominal) + 80) > 2)
    }

    @Test func noGrowthNoClock() {
        #expect(RecordingClock.fit(growth: [], nominalPeriod: Self.nominal) == nil)
        #expect(RecordingClock.fit(growth: [(5, 0)], nominalPeriod: Self.nominal) == nil)
    }

    @Test func instantsAndFramesAreInverse() {
        let clock = RecordingClock(origin: 1_000, period: 20_830.5)
        #expect(abs(clock.frame(at: clock.instant(ofFrame: 48_123)) - 48_123) < 1e-4)
        #expect(abs(clock.ppm(nominalPeriod: 20_830.5)) < 1e-9)
    }

    /// Timing reports of a sink whose frame `n` plays at `origin + n × period`, one every 20 ms
    /// of a recording delivered in 10 ms fragments, rounded to the microsecond as the server
    /// reports them, two in five a block of 2.4 ms or two late (taken while a block was on its way
    /// to the queue), one in fifty 3 ms early, and `extra` frames passed on twice at `stepAt` (a rewind).
    static func timing(origin: Int64, period: Double, seconds: Double, outlier: Int64 = 3_000_000,
                       stepAt: Int64? = nil, extra: Int = 0) -> [AudioMonitorRecorder.Timing] {
        var generator = AudioBenchSignal.SplitMix(seed: 11)
        var result: [AudioMonitorRecorder.Timing] = []
        var frame: Int64 = 480 + Int64(generator.next() % 480)
        var added: Int64 = 0
        while Double(frame) * period < seconds * 1e9 {
            let plays = origin + Int64(Double(frame - added) * period)
            if let stepAt, plays >= stepAt, added == 0 { added = Int64(extra) }
            var instant = origin + Int64(Double(frame - added) * period)
            let late = generator.next() % 5 < 2 ? Int64(1 + generator.next() % 2) * 2_400_000 : 0
            instant = instant / 1_000 * 1_000 + late - (result.count % 50 == 49 ? outlier : 0)
            result.append(.init(frame: frame, instant: instant))
            frame += 960 + Int64(generator.next() % 7) - 3
        }
        return result
    }

    @Test func timingReportsGiveTheSinksPeriodAndOrigin() throws {
        let period = Self.nominal / (1 + 12e-6)
        let clock = try #require(RecordingClock.fit(timing: Self.timing(origin: 5_000_000_000, period: period, seconds: 40),
                                                    nominalPeriod: Self.nominal))
        #expect(abs(clock.ppm(nominalPeriod: Self.nominal) - 12) < 0.05)
        #expect(abs(clock.origin - 5_000_000_000) < 2_000)
        let late = 48_000.0 * 38
        #expect(abs(clock.instant(ofFrame: late) - (5_000_000_000 + Int64(late * period))) < 2_000)
    }

    @Test func aRewindAtABreakInTheTimingDoesNotBendThePeriod() throws {
        let origin: Int64 = 2_000_000_000
        let step = origin + 15_000_000_000
        let timing = Self.timing(origin: origin, period: Self.nominal, seconds: 30, stepAt: step, extra: 130)
        let withBreak = try #require(RecordingClock.fit(timing: timing, breaks: [step], nominalPeriod: Self.nominal))
        #expect(abs(withBreak.ppm(nominalPeriod: Self.nominal)) < 0.05)
        let without = try #require(RecordingClock.fit(timing: timing, nominalPeriod: Self.nominal))
        #expect(abs(without.ppm(nominalPeriod: Self.nominal)) > 2)
    }

    @Test func fewerThanTwoReportsNoClock() {
        #expect(RecordingClock.fit(timing: [], nominalPeriod: Self.nominal) == nil)
        #expect(RecordingClock.fit(timing: [.init(frame: 960, instant: 1_000)], nominalPeriod: Self.nominal) == nil)
    }
}
