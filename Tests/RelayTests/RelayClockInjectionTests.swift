import Foundation
import TandemClock
import TandemNet
import TandemTestKit
import Testing
import TandemHarness

/// `tandem serve --clock-offset S --clock-drift-ppm PPM`: the relay's session clock runs with
/// the injected error, its time service says so, and participants still agree on session time.
@Suite("Relay clock injection")
struct RelayClockInjectionProcessTests {
    @Test func theInjectedClockIsExactWithoutDriftAndGainsItsDrift() throws {
        let epoch = try #require(SessionEpochClock(offset: 1 << 40).injecting(offset: -2_500_000_000, driftPPM: 0))
        #expect(epoch.offset == (1 << 40) - 2_500_000_000)
        #expect(epoch.localTime(atMonotonic: 1_000) == 1_000 + (1 << 40) - 2_500_000_000)
        #expect(epoch.monotonicTime(atLocal: epoch.localTime(atMonotonic: 123_456_789)) == 123_456_789)

        let drifting = try #require(SessionEpochClock(offset: 0).injecting(offset: 3_000_000_000, driftPPM: 400))
        let origin = drifting.origin
        // 10 s after the origin: 4 ms gained on top of the offset.
        let later = origin + 10_000_000_000
        #expect(drifting.localTime(atMonotonic: later) == later + 3_000_000_000 + 4_000_000)
        #expect(drifting.localTime(atMonotonic: origin) == origin + 3_000_000_000)
        for raw in [origin - 7_000_000_000, origin, later, later + 123_457] {
            #expect(abs(drifting.monotonicTime(atLocal: drifting.localTime(atMonotonic: raw)) - raw) <= 1)
        }
        // Bounded: a day of offset, 1000 ppm of drift; an injected clock takes no second error.
        #expect(SessionEpochClock(offset: 0).injecting(offset: 86_400_000_000_001, driftPPM: 0) == nil)
        #expect(SessionEpochClock(offset: 0).injecting(offset: -86_400_000_000_000, driftPPM: -1_000) != nil)
        #expect(SessionEpochClock(offset: 0).injecting(offset: 0, driftPPM: 1_000.5) == nil)
        #expect(SessionEpochClock(offset: 0).injecting(offset: 0, driftPPM: .nan) == nil)
        #expect(drifting.injecting(offset: 1, driftPPM: 1) == nil)
    }

    @Test(arguments: [["--clock-offset", "86401"], ["--clock-offset=-1e9"], ["--clock-drift-ppm", "1000.1"],
                      ["--clock-drift-ppm=-1001"], ["--clock-drift-ppm", "nan"], ["--clock-offset", "x"]])
    func outOfRangeErrorsAreUsageErrors(flags: [String]) throws {
        let output = try TandemProcess.run(["serve", "--bind", "127.0.0.1", "--port", "0"] + flags, timeout: 20)
        #expect(output.status == 64, "\(output.standardError)")
        let flag = String(flags[0].prefix { $0 != "=" })
        #expect(output.standardError.contains(flag), "\(output.standardError)")
    }

    /// A time probe against a relay started with an offset sees that offset, and two participants
    /// with clocks of their own, each synchronised to that relay, agree on session time.
    @Test func probesSeeTheOffsetAndParticipantsAgreeOnSessionTime() async throws {
        let offset: Int64 = 2_500_000_000
        let drift = 400.0
        let started = SystemClock().instant().nanoseconds
        let serve = try ServeProcess(arguments: ["--session-epoch", "0", "--clock-offset", "2.5", "--clock-drift-ppm", "400"])
        defer { serve.stop() }
        let ready = SystemClock().instant().nanoseconds
        let address = try SocketAddress(host: "127.0.0.1", port: serve.port)
        let system = SystemClock()
        let skewed = SkewedClock(base: system, offset: -1_700_000_000, driftPPM: -150, origin: system.instant().nanoseconds)
        let ana = try ClockProber(server: address, clock: system)
        let ben = try ClockProber(server: address, clock: skewed)
        ana.start()
        ben.start()
        defer {
            ana.stop()
            ben.stop()
        }
        // Synchronising is real UDP on loopback: bounded, and done in well under a second.
        let deadline = ContinuousClock.now + .seconds(10)
        func synchronised(_ prober: ClockProber) -> Bool {
            let bound = prober.sessionClock.errorBound(atLocal: prober.clock.instant().nanoseconds)
            return bound.map { $0 < 2_000_000 } ?? false
        }
        while !(synchronised(ana) && synchronised(ben)), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(synchronised(ana) && synchronised(ben))
        let anaSession = try #require(ana.sessionTime())
        let now = system.instant().nanoseconds
        let benSession = try #require(ben.sessionTime())
        let after = system.instant().nanoseconds
        let anaBound = try #require(ana.sessionClock.errorBound(atLocal: now))
        let benBound = try #require(ben.sessionClock.errorBound(atLocal: skewed.localTime(atBase: after)))
        // The relay's clock: the raw clock plus 2.5 s, gaining 400 ppm since it started (between
        // this test's reading before launching it and the first line it printed).
        let gainedAtMost = Int64(Double(now - started) * drift / 1e6) + 1
        let gainedAtLeast = Int64(Double(now - ready) * drift / 1e6)
        let seen = anaSession - now
        #expect(seen >= offset + gainedAtLeast - anaBound - 1_000_000, "\(seen - offset) ns off the offset")
        #expect(seen <= offset + gainedAtMost + anaBound + 1_000_000, "\(seen - offset) ns off the offset")
        // Ben's clock is 1.7 s behind and slower; his estimate of session time is Ana's, within
        // both bounds and the time between the two readings.
        #expect(abs(benSession - anaSession) <= anaBound + benBound + (after - now) + 1_000_000,
                "ana \(anaSession), ben \(benSession): \(benSession - anaSession) ns apart")
    }
}
