import Testing
import TandemClock
import TandemTestKit

@Test func scratchJitter() {
    let ms: Int64 = 1_000_000
    var buckets: [Int: [Double]] = [:]
    var worst: [Int: (Double, Double, Double)] = [:]
    var ratios: [Double] = []; var total = 0
    for seed in 0..<20 {
        var sim = ClockSyncSimulation(setup: .init(upstream: LinkProfile(delay: .uniform(25*ms, 55*ms)), downstream: LinkProfile(delay: .uniform(25*ms, 55*ms)), clientOffset: -2500*ms, clientDriftPPM: 0, seed: 0x5EED_0100 + UInt64(seed)))
        var clock = SessionClock()
        sim.run(until: 60_000*ms, evaluationInterval: 100*ms) { event in
            switch event {
            case let .sample(s, _, now): clock.onSample(s, now: now)
            case let .evaluation(t, l):
                guard let st = clock.sessionTime(atLocal: l) else { return }; let err = abs(Double(st - t))
                let b = Int(t / (10_000*ms)); if t > 10_000*ms { total += 1; ratios.append(err / Double(clock.errorBound(atLocal: l)!)) }
                buckets[b, default: []].append(err)
                let e = clock.estimate!
                if err > (worst[b]?.0 ?? 0) { worst[b] = (err, e.driftPPM, e.driftUncertainty * 1e6) }
            }
        }
    }
    ratios.sort(); print("bucket ratio p50 p90 p95 p99", ratios[ratios.count/2], ratios[ratios.count*9/10], ratios[ratios.count*95/100], ratios[ratios.count*99/100])
    for b in buckets.keys.sorted() {
        let v = buckets[b]!.sorted()
        print("bucket", b*10, "p50", v[v.count/2], "p99", v[v.count*99/100], "max", v.last!, "worst drift/unc", worst[b]!)
    }
}
