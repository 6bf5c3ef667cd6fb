import Testing
import TandemClock
import TandemHarness

/// The typed forms of the clock protocols and of `SessionClock` against the bare forms in
/// nanoseconds they replace: a clock written against either reads the same through both.
@Suite struct ClockFormsTests {
    /// A clock written against the bare forms only.
    struct BareClock: MonotonicDerivedClock {
        let reading: Int64
        let offset: Int64
        func now() -> Int64 { reading }
        func monotonicTime(atLocal localTime: Int64) -> Int64 { localTime - offset }
        func localTime(atMonotonic monotonicTime: Int64) -> Int64 { monotonicTime + offset }
    }

    /// A clock written against the typed forms only.
    struct TypedClock: MonotonicDerivedClock {
        let reading: LocalInstant
        let offset: TimeSpan
        func instant() -> LocalInstant { reading }
        func hostInstant(atLocal local: LocalInstant) -> HostInstant { HostInstant(nanoseconds: (local - offset).nanoseconds) }
        func localInstant(atHost host: HostInstant) -> LocalInstant { LocalInstant(nanoseconds: host.nanoseconds) + offset }
    }

    @Test(arguments: [Int64.min, -7_300_000_123, 0, 42, Int64.max])
    func aBareClockReadsTheSameThroughTheTypedForms(reading: Int64) {
        let clock = BareClock(reading: reading, offset: 1_000)
        #expect(clock.instant() == LocalInstant(nanoseconds: reading))
        let any: any LocalClock = clock
        #expect(any.instant().nanoseconds == reading)
        let local = LocalInstant(nanoseconds: 5_000_000)
        #expect(clock.hostInstant(atLocal: local) == HostInstant(nanoseconds: 4_999_000))
        #expect(clock.localInstant(atHost: clock.hostInstant(atLocal: local)) == local)
    }

    @Test(arguments: [Int64.min, -7_300_000_123, 0, 42, Int64.max])
    func aTypedClockReadsTheSameThroughTheBareForms(reading: Int64) {
        let clock = TypedClock(reading: LocalInstant(nanoseconds: reading), offset: .microseconds(1))
        #expect(clock.now() == reading)
        let any: any MonotonicDerivedClock = clock
        #expect(any.now() == reading)
        #expect(any.monotonicTime(atLocal: 5_000_000) == 4_999_000)
        #expect(any.localTime(atMonotonic: 4_999_000) == 5_000_000)
    }

    @Test(arguments: [-250.0, 0, 100])
    func aSkewedClockOverADerivedOneMapsBothWays(driftPPM: Double) {
        let clock = SkewedClock(base: TypedClock(reading: .zero, offset: .milliseconds(3)), offset: -7_300_000_123, driftPPM: driftPPM, origin: 42)
        for raw in stride(from: Int64(0), through: 3_600_000_000_000, by: 123_456_789_017) {
            let host = HostInstant(nanoseconds: raw)
            let local = clock.localInstant(atHost: host)
            #expect((clock.hostInstant(atLocal: local) - host).magnitude <= TimeSpan(nanoseconds: 1))
            #expect(clock.localTime(atMonotonic: raw) == local.nanoseconds)
            #expect(clock.monotonicTime(atLocal: local.nanoseconds) == clock.hostInstant(atLocal: local).nanoseconds)
        }
    }

    @Test func aVirtualClockReadsTheSameInBothForms() {
        let clock = VirtualClock(start: 5)
        clock.advance(by: 10)
        #expect(clock.instant() == LocalInstant(nanoseconds: 15))
        #expect(clock.now() == 15)
    }

    @Test func theSessionClocksTypedFormsAgreeWithTheBareOnes() throws {
        var typed = SessionClock()
        var bare = SessionClock()
        #expect(typed.sessionTime(atLocal: LocalInstant.zero) == nil)
        #expect(typed.localTime(atSession: SessionInstant.zero) == nil)
        #expect(typed.errorBound(atLocal: LocalInstant.zero) == nil)
        for step in Int64(0)..<20 {
            let local = step * 20_000_000
            let sample = SessionClockTests.sample(at: local, offset: 7_000_000 + local / 20_000)
            let verdict = typed.onSample(sample, now: LocalInstant(nanoseconds: local + 2_010_000))
            #expect(bare.onSample(sample, now: local + 2_010_000) == verdict)
        }
        for local in stride(from: Int64(0), through: 2_000_000_000, by: 333_333_333) {
            let instant = LocalInstant(nanoseconds: local)
            let session = try #require(typed.sessionTime(atLocal: instant))
            #expect(bare.sessionTime(atLocal: local) == session.nanoseconds)
            #expect(typed.sessionTime(atLocal: local) == session.nanoseconds)
            #expect(bare.localTime(atSession: session.nanoseconds) == typed.localTime(atSession: session)?.nanoseconds)
            #expect(bare.errorBound(atLocal: local) == typed.errorBound(atLocal: instant)?.nanoseconds)
            #expect(bare.statistics(atLocal: local) == typed.statistics(atLocal: instant))
        }
    }

    @Test func theErrorBoundAtTheEndsOfTimeAgreesInBothForms() throws {
        var clock = SessionClock()
        clock.onSample(SessionClockTests.sample(at: 0, offset: 5_000_000_000), now: LocalInstant(nanoseconds: 2_010_000))
        for local in [LocalInstant.distantPast + TimeSpan(nanoseconds: 1 << 40), .distantFuture] {
            let bound = try #require(clock.errorBound(atLocal: local))
            #expect(bound >= .zero)
            #expect(clock.errorBound(atLocal: local.nanoseconds) == bound.nanoseconds)
        }
    }
}
