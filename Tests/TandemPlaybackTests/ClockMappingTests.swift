import Testing
import Tandem
import TandemClock
@testable import TandemPlayback

/// Where a clock mapping's drift comes from: the estimator's fit when the session clock knows it,
/// times the local clock's own rate against the host's; else the estimate's slope between two
/// readings.
@Suite struct ClockMappingTests {
    /// A session clock `offset` ahead of the local clock, running `ppm` fast, which tells its
    /// drift or not.
    struct LinearClock: SessionClockSource {
        let offset: Int64
        let ppm: Double
        let tellsRate: Bool
        func sessionTime(atLocal localTime: Int64) -> Int64? {
            localTime + offset + Int64((Double(localTime) * ppm / 1e6).rounded())
        }
        func localTime(atSession sessionTime: Int64) -> Int64? { nil }
        func errorBound(atLocal localTime: Int64) -> Int64? { 0 }
        func stop() {}
        func sessionSecondsPerLocalSecond(atLocal localTime: Int64) -> Double? { tellsRate ? 1 + ppm / 1e6 : nil }
    }

    /// The host's raw clock, read at no particular time: only its arithmetic is used.
    struct HostArithmetic: MonotonicDerivedClock {
        func now() -> Int64 { 0 }
        func monotonicTime(atLocal localTime: Int64) -> Int64 { localTime }
        func localTime(atMonotonic monotonicTime: Int64) -> Int64 { monotonicTime }
    }

    @Test(arguments: [true, false])
    func theDriftIsTheEstimatorsWhenTheClockKnowsIt(tellsRate: Bool) throws {
        let host = HostInstant(nanoseconds: 50_000_000_000)
        // The local clock runs 20 ppm slow against the host's.
        let local = SkewedClock(base: HostArithmetic(), offset: 0, driftPPM: -20, origin: 0)
        let clock = LinearClock(offset: 3_000_000_000, ppm: 40, tellsRate: tellsRate)
        let mapping = try #require(ClockMapping.sample(clock, localClock: local, at: host))
        let expected = (1 + 40e-6) * (1 - 20e-6)
        #expect(abs(mapping.sessionSecondsPerHostSecond - expected) < 1e-9, "\(mapping)")
        #expect(mapping.session.nanoseconds == clock.sessionTime(atLocal: local.localTime(atMonotonic: host.nanoseconds)))
    }

    @Test func aRateThatIsNoRateIsMeasuredInstead() throws {
        struct Broken: SessionClockSource {
            func sessionTime(atLocal localTime: Int64) -> Int64? { localTime }
            func localTime(atSession sessionTime: Int64) -> Int64? { sessionTime }
            func errorBound(atLocal localTime: Int64) -> Int64? { 0 }
            func stop() {}
            func sessionSecondsPerLocalSecond(atLocal localTime: Int64) -> Double? { .nan }
        }
        let mapping = try #require(ClockMapping.sample(Broken(), localClock: HostArithmetic(), at: HostInstant(nanoseconds: 1_000)))
        #expect(mapping.sessionSecondsPerHostSecond == 1)
    }
}
