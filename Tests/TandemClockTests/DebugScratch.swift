import Testing
import TandemClock
import TandemTestKit

@Test func scratchJitter() {
    let ms: Int64 = 1_000_000
    var sim = ClockSyncSimulation(setup: .init(upstream: LinkProfile(delay: .uniform(25*ms, 55*ms)), downstream: LinkProfile(delay: .uniform(25*ms, 55*ms)), clientOffset: -2500*ms, clientDriftPPM: 0, seed: 0x5EED_0001))
    var n = 0
    var clock = SessionClock()
    sim.run(until: 60_000*ms, evaluationInterval: 1000*ms) { event in
        switch event {
        case let .sample(s, v, now): n += 1; clock.onSample(s, now: now); if n % 10 == 0 { print("sample", n, v, s.offset + 2500*ms, s.roundTripDelay) }
        case let .evaluation(t, l):
            let e = clock.estimate!
            print("t", t/ms, "err", (clock.sessionTime(atLocal: l)! - t), "raw", e.sessionTime(atLocal: l) - t, "drift", e.driftPPM, "bound", e.errorBound, "win", clock.estimator.window.count)
        }
    }
}
