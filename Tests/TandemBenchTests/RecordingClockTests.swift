import Testing
import TandemNet
@testable import TandemBench

/// The recording's clock fitted to the sound server's timing reports: reports made up from a
/// sink whose clock is known, many of them late by a block or two, a few early.
@Suite struct RecordingClockTests {
    static let nominal = 1e9 / 48_000

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
        var generator = SeededRandom(seed: 11)
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

    @Test func aKnownPeriodLeavesOnlyTheOriginsToFit() throws {
        let period = Self.nominal * (1 + 1e-6)
        let clock = try #require(RecordingClock.fit(timing: Self.timing(origin: 3_000_000_000, period: period, seconds: 20),
                                                    nominalPeriod: Self.nominal, period: period))
        #expect(clock.period == period)
        #expect(abs(clock.origin - 3_000_000_000) < 2_000)
    }

    @Test func fewerThanTwoReportsNoClock() {
        #expect(RecordingClock.fit(timing: [], nominalPeriod: Self.nominal) == nil)
        #expect(RecordingClock.fit(timing: [.init(frame: 960, instant: 1_000)], nominalPeriod: Self.nominal) == nil)
    }
}
