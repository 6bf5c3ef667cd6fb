import Testing
@testable import TandemBench

/// When an offered rate of `tandem bench cluster`'s ordered delivery holds, and the rate sustained.
@Suite struct ClusterOrderedReportTests {
    static func step(_ rate: Int, delivered: Int = 300, p99: Double?) -> ClusterOrderedReport.Step {
        // 100 values, 98 at 1 ms and two at `p99`: by nearest rank, the p99 is `p99`.
        let latency = p99.flatMap { Percentiles(Array(repeating: 1.0, count: 98) + [$0, $0]) }
        return ClusterOrderedReport.Step(offeredPerSecond: rate, proposals: 100, expected: 300, delivered: delivered,
                                         latency: latency, senderLatenessP99: 0)
    }

    @Test func aRateHoldsOnlyWithEveryReceiptAndItsP99WithinTheBound() {
        #expect(Self.step(500, p99: 50).holds(p99Bound: 50))
        #expect(!Self.step(500, p99: 50.5).holds(p99Bound: 50))
        #expect(!Self.step(500, delivered: 299, p99: 1).holds(p99Bound: 50))
        #expect(!Self.step(500, p99: nil).holds(p99Bound: 50))
    }

    @Test func theRateSustainedIsTheHighestThatHeld() {
        let arrangement = ClusterOrderedReport.Arrangement(
            name: "three relays", relays: 3, joinSeconds: 1,
            steps: [Self.step(250, p99: 5), Self.step(500, p99: 20), Self.step(1_000, p99: 80)], usage: [])
        #expect(arrangement.sustained(p99Bound: 50) == 500)
        #expect(arrangement.sustained(p99Bound: 10) == 250)
        #expect(arrangement.sustained(p99Bound: 1) == nil)
    }
}
