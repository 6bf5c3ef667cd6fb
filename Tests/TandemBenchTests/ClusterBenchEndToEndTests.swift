import Foundation
import Testing
import TandemMediaTypes
import TandemHarness
@testable import TandemBench

/// Not a unit test: a tiny `tandem bench cluster` end to end, run only when asked
/// (`TANDEM_CLUSTER_BENCH_E2E=1 swift test --skip-build --no-parallel --filter ClusterBenchEndToEndProcessTests`;
/// `TANDEM_EXECUTABLE` may name a release build). It starts real `nats-server` nodes and
/// `tandem serve`, `host` and `join` processes on loopback, and stops them all.
@Suite(.serialized, .enabled(if: NATSServerProcess.isAvailable && ProcessInfo.processInfo.environment["TANDEM_CLUSTER_BENCH_E2E"] != nil))
struct ClusterBenchEndToEndProcessTests {
    static var executable: String { ProcessInfo.processInfo.environment["TANDEM_EXECUTABLE"] ?? TandemProcess.executablePath }

    @Test func orderedDeliveryForTenSessions() async throws {
        var benchmark = ClusterOrderedBenchmark(sessions: 10, executable: Self.executable)
        benchmark.rates = [100]
        benchmark.stepSeconds = 1
        let report = try await benchmark.run { print("bench cluster: \($0)") }
        print(report.table)
        for arrangement in [report.oneRelay, report.threeRelays] {
            #expect(arrangement.steps.first?.delivered == 300, "\(arrangement.name)")
        }
    }

    @Test func fourPlayersOverTwoRelaysAndARelayKilled() throws {
        let clip = FileManager.default.temporaryDirectory.appendingPathComponent("tandem-cluster-bench-e2e-\(UUID().uuidString).mp4").path
        defer { try? FileManager.default.removeItem(atPath: clip) }
        try BenchmarkClip(seconds: 15).make(at: clip)
        var benchmark = ClusterPlayersBenchmark(executable: Self.executable, clip: clip, seconds: 3, failover: true)
        benchmark.failoverSeconds = 4
        let report = try benchmark.run { print("bench cluster: \($0)") }
        print(report.table)
        #expect(report.twoRelays.placement == ["peer-0 A", "peer-1 A", "peer-2 B", "peer-3 B"])
        #expect(report.oneRelay.frames > 0 && report.twoRelays.frames > 0)
        #expect(report.failover?.backSeconds != nil)
        #expect((report.failover?.reliableSent ?? 0) > 0)
        #expect(report.failover?.reliableLost == 0 && report.failover?.reliableDuplicated == 0, "no reliable message lost or twice across the kill")
    }
}
