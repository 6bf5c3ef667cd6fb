import Foundation
import Testing
import TandemNATS
import TandemNet
import TandemTestKit
import TandemHarness

/// Not a unit test: a figure for the report, run only when asked
/// (`TANDEM_NATS_BENCH=1 swift test --filter JetStreamLatencyBenchmarkProcessTests`). Sequential CAS
/// publishes (`Nats-Expected-Last-Subject-Sequence` and a message id) on a file stream, R1 on
/// one node and R3 on a three-node cluster, each on its own subject chain; prints p50/p90/p99.
@Suite(.enabled(if: NATSServerProcess.isAvailable && ProcessInfo.processInfo.environment["TANDEM_NATS_BENCH"] != nil))
struct JetStreamLatencyBenchmarkProcessTests {
    static let count = Int(ProcessInfo.processInfo.environment["TANDEM_NATS_BENCH_COUNT"] ?? "") ?? 2000

    static func measure(_ label: String, url: String, replicas: Int) async throws {
        let connection = try await NATSConnection.connect(to: url)
        let jetStream = JetStream(connection: connection)
        let stream = JetStreamStreamConfiguration(name: "BENCH", subjects: ["bench.>"], storage: .file, replicas: replicas, duplicateWindow: 120_000_000_000)
        _ = try await within(15, "the bench stream") {
            while true {
                if let info = try? await jetStream.createStream(stream), replicas == 1 || info.cluster?.leader != nil { return info }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        let clock = ContinuousClock()
        var samples: [Duration] = []
        var last: UInt64 = 0
        let payload = [UInt8](repeating: 0x5A, count: 256)
        for index in 0..<(count + 100) {
            let start = clock.now
            let ack = try await jetStream.publish("bench.session", payload: payload,
                                                  options: JetStreamPublishOptions(messageID: "b-\(index)", expectedLastSubjectSequence: last))
            let elapsed = clock.now - start
            last = ack.sequence
            if index >= 100 { samples.append(elapsed) }
        }
        samples.sort()
        func percentile(_ p: Double) -> Double {
            let sample = samples[min(samples.count - 1, Int(Double(samples.count) * p))]
            return Double(sample.components.attoseconds) / 1e15 + Double(sample.components.seconds) * 1000
        }
        print(String(format: "JetStream CAS publish %@: n=%d p50 %.3f ms p90 %.3f ms p99 %.3f ms max %.3f ms",
                     label, samples.count, percentile(0.5), percentile(0.9), percentile(0.99), percentile(1)))
        await connection.close()
    }

    @Test func casPublishLatency() async throws {
        let server = try NATSServerProcess()
        defer { server.stop() }
        try await Self.measure("R1, one node", url: server.url, replicas: 1)
        let cluster = try NATSTestCluster(size: 3)
        defer { cluster.stop() }
        try await Self.measure("R3, three nodes", url: cluster.url, replicas: 3)
    }
}
