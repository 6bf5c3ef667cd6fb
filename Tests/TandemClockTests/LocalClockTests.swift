import Testing
import TandemClock
import TandemHarness

@Suite struct LocalClockIOTests {
    @Test func skewedClockAddsOffsetAndDrift() {
        let base = VirtualClock(start: 1_000_000_000)
        let clock = SkewedClock(base: base, offset: 5_000_000_000, driftPPM: 100, origin: 1_000_000_000)
        #expect(clock.instant().nanoseconds == 6_000_000_000)
        base.advance(by: 10_000_000_000)
        // Ten seconds at 100 ppm fast: one extra millisecond.
        #expect(clock.instant().nanoseconds == 16_001_000_000)
    }

    @Test(arguments: [-250.0, -3.5, 0, 0.25, 100, 1_000])
    func skewedClockInvertsExactly(driftPPM: Double) {
        let clock = SkewedClock(base: VirtualClock(), offset: -7_300_000_123, driftPPM: driftPPM, origin: 42)
        for base in stride(from: Int64(0), through: 3_600_000_000_000, by: 123_456_789_017) {
            let local = clock.localTime(atBase: base)
            #expect(abs(clock.baseTime(atLocal: local) - base) <= 1)
        }
    }

    @Test func virtualClockMovesOnlyWhenTold() {
        let clock = VirtualClock(start: 5)
        #expect(clock.instant().nanoseconds == 5)
        #expect(clock.instant().nanoseconds == 5)
        clock.advance(by: 10)
        #expect(clock.instant().nanoseconds == 15)
        clock.set(to: 100)
        #expect(clock.instant().nanoseconds == 100)
    }

    @Test func systemClockNeverGoesBackwards() {
        let clock = SystemClock()
        var previous = clock.instant().nanoseconds
        #expect(previous > 0)
        for _ in 0..<1_000 {
            let next = clock.instant().nanoseconds
            #expect(next >= previous)
            previous = next
        }
    }
}
