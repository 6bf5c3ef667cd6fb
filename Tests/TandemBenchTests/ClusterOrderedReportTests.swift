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

    static func natsStep(_ rate: Int, commits: Int = 100, skipped: Int = 0, failures: Int = 0, p99: Double) -> ClusterCASBenchmark.Step {
        ClusterCASBenchmark.Step(offeredPerSecond: rate, offered: 100, commits: commits, skipped: skipped, failures: failures,
                                 latency: Percentiles(Array(repeating: 1.0, count: 98) + [p99, p99]))
    }

    @Test func aPacedRateOfNATSAloneHoldsWithEveryPublishAcknowledgedOrBehindAndItsP99WithinTheBound() {
        #expect(Self.natsStep(500, p99: 50).holds(p99Bound: 50))
        #expect(Self.natsStep(500, commits: 97, skipped: 3, p99: 5).holds(p99Bound: 50))
        #expect(!Self.natsStep(500, commits: 99, p99: 5).holds(p99Bound: 50))
        #expect(!Self.natsStep(500, commits: 99, failures: 1, p99: 5).holds(p99Bound: 50))
        #expect(!Self.natsStep(500, p99: 51).holds(p99Bound: 50))
    }

    @Test func theTableShowsNATSAloneBesideTheRelaysAtEachRate() {
        let three = ClusterOrderedReport.Arrangement(name: "three relays", relays: 3, joinSeconds: 1,
                                                     steps: [Self.step(250, p99: 5), Self.step(500, p99: 80)], usage: [])
        let one = ClusterOrderedReport.Arrangement(name: "one relay", relays: 1, joinSeconds: 1, steps: [], usage: [])
        let alone = ClusterCASBenchmark.Result(chains: 1_000, streams: 3, commits: 25_000, failures: 0, perSecond: 5_000,
                                               latency: Percentiles([40, 50]),
                                               paced: [Self.natsStep(250, p99: 2), Self.natsStep(500, p99: 3), Self.natsStep(1_000, p99: 90)])
        #expect(alone.sustained(p99Bound: 50) == 500)
        let report = ClusterOrderedReport(sessions: 1_000, participants: 4, stepSeconds: 3, p99Bound: 50, oneRelay: one, threeRelays: three,
                                          natsAlone: alone)
        let lines = report.table.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("| 250 |") && $0.hasSuffix("| 1.00 / 2.00 | 100/100 |") })
        #expect(lines.contains { $0.hasPrefix("| 1000 |") && $0.contains("not tried") && $0.hasSuffix("100/100 ✗ |") })
        #expect(lines.contains { $0.hasPrefix("| 5000 |") && $0.hasSuffix("| 5.0 % |") }, "the relays' 250 /s against NATS's 5,000 /s")
    }
}
