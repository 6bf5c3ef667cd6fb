import Testing
import TandemClock

@Suite struct SessionClockTests {
    static func sample(at time: Int64, offset: Int64, delay: Int64 = 1_000_000) -> ClockSample {
        ClockEstimatorTests.sample(at: time, offset: offset, up: delay, down: delay)
    }

    @Test func unsynchronizedUntilTheFirstSample() {
        var clock = SessionClock()
        #expect(!clock.isSynchronized)
        #expect(clock.sessionTime(atLocal: 0) == nil)
        #expect(clock.localTime(atSession: 0) == nil)
        #expect(clock.errorBound(atLocal: 0) == nil)
        #expect(clock.statistics(atLocal: 0) == nil)
        clock.onSample(Self.sample(at: 0, offset: 5_000_000_000), now: 2_010_000)
        #expect(clock.isSynchronized)
        #expect(clock.sessionTime(atLocal: 10_000_000) == 5_010_000_000)
    }

    @Test func theRateIsTheEstimatorsDrift() throws {
        var clock = SessionClock()
        #expect(clock.sessionSecondsPerLocalSecond == nil)
        // The session clock gains 50 ppm on the local one: three seconds of samples fit it.
        for step in Int64(0)..<150 {
            let local = step * 20_000_000
            clock.onSample(Self.sample(at: local, offset: 7_000_000 + local / 20_000), now: local + 2_010_000)
        }
        let estimate = try #require(clock.estimate)
        let rate = try #require(clock.sessionSecondsPerLocalSecond)
        #expect(rate == 1 + estimate.drift)
        #expect(abs(estimate.driftPPM - 50) < 1, "fitted \(estimate.driftPPM) ppm")
    }

    @Test(arguments: [Int64(8_000_000), -8_000_000])
    func correctionsAreSlewedNeverStepped(correction: Int64) throws {
        var clock = SessionClock()
        // The true offset is zero. A first sample with a lopsided trip makes it look like
        // `correction`; then symmetric ones reveal the truth.
        let up = 1_000_000 + max(2 * correction, 0)
        let down = 1_000_000 + max(-2 * correction, 0)
        clock.onSample(ClockEstimatorTests.sample(at: 0, offset: 0, up: up, down: down), now: up + down + 10_000)
        #expect(clock.sessionTime(atLocal: up + down + 10_000) == up + down + 10_000 + correction)
        let slewRate = clock.configuration.maximumSlewRate
        var local = up + down + 10_000
        var previous = try #require(clock.sessionTime(atLocal: local))
        // Three seconds of samples, long enough for the drift to be fitted too.
        for _ in 1...130 {
            let sampleTime = local + 22_000_000
            while local < sampleTime + 2_020_000 {
                local += 1_000_000
                let session = try #require(clock.sessionTime(atLocal: local))
                #expect(session >= previous, "session time went backwards")
                // Never faster or slower than the slew rate allows (plus rounding).
                let step = Double(session - previous)
                #expect(abs(step - 1_000_000) <= slewRate * 1_000_000 + 2)
                previous = session
            }
            clock.onSample(Self.sample(at: sampleTime, offset: 0, delay: 1_000_000), now: local)
        }
        // Long after, the published clock has converged on the truth (offset zero).
        let later = local + 1_000_000_000
        #expect(abs(try #require(clock.sessionTime(atLocal: later)) - later) < 1_000)
        #expect(try #require(clock.errorBound(atLocal: later)) < 100_000)
    }

    @Test func localTimeInvertsSessionTimeWhileSlewing() throws {
        var clock = SessionClock()
        clock.onSample(ClockEstimatorTests.sample(at: 0, offset: 2_000_000_000, up: 1_000_000, down: 9_000_000), now: 10_010_000)
        for index in 1...10 {
            let time = Int64(index) * 25_000_000 + 10_000_000
            clock.onSample(Self.sample(at: time, offset: 2_000_000_000), now: time + 2_010_000)
        }
        for local in stride(from: Int64(0), through: 2_000_000_000, by: 7_777_777) {
            let session = try #require(clock.sessionTime(atLocal: local))
            let back = try #require(clock.localTime(atSession: session))
            #expect(abs(back - local) <= 1, "local \(local) → session \(session) → local \(back)")
        }
    }

    @Test func statisticsDescribeTheWindow() throws {
        var clock = SessionClock()
        for index in 0..<10 {
            let delay: Int64 = index == 3 ? 400_000 : 500_000
            clock.onSample(Self.sample(at: Int64(index) * 100_000_000, offset: 7_000, delay: delay), now: Int64(index) * 100_000_000 + 1_100_000)
        }
        let statistics = try #require(clock.statistics(atLocal: 1_000_000_000))
        #expect(statistics.samplesKept == 10)
        #expect(statistics.samplesRejected == 0)
        #expect(statistics.bestRoundTrip == 800_000)
        #expect(statistics.medianRoundTrip == 1_000_000)
        #expect(abs(statistics.offset - 7_000) < 100)
    }
}
