#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TandemNet
import TandemTestKit
import TandemWire

/// Not a unit test: the figures in docs/SCALING.md, run only when asked
/// (`TANDEM_CLUSTER_BENCH=1 swift test --skip-build --no-parallel --filter ClusterMeasurement`).
/// Side by side in one run: one relay alone, and two relays on a three-node NATS cluster (R3)
/// with the proposer on one and the reader on the other. For each: ordered delivery latency
/// (a proposal sent, then heard by the other participant: p50, p99), one at a time; the rate of
/// a burst of proposals; the process's CPU time per proposal (relays and clients together; the
/// NATS servers are other processes); what JetStream stores per proposal.
@Suite(.serialized, .enabled(if: NATSServerProcess.isAvailable && ProcessInfo.processInfo.environment["TANDEM_CLUSTER_BENCH"] != nil))
struct ClusterMeasurement {
    static let count = Int(ProcessInfo.processInfo.environment["TANDEM_CLUSTER_BENCH_COUNT"] ?? "") ?? 1000
    static let body = [UInt8](repeating: 0x5A, count: 256)

    @Test func orderedDeliveryAlongsideOneRelay() async throws {
        let single = try RelayServer(address: try SocketAddress(host: "127.0.0.1", port: 0))
        single.start()
        let endpoint = RelayEndpoint(host: "127.0.0.1", port: single.port)
        try await Self.measure("one relay", proposer: endpoint, reader: endpoint, streamBytes: nil)
        single.stop()

        let nats = try startNATSCluster()
        defer { nats.stop() }
        let first = try await InProcessRelay.start(nats.url)
        let second = try await InProcessRelay.start(nats.url)
        try await Self.measure("two relays, NATS R3", proposer: first.endpoint, reader: second.endpoint, streamBytes: nats.url)
        await first.stop()
        await second.stop()
    }

    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    static func measure(_ label: String, proposer: RelayEndpoint, reader: RelayEndpoint, streamBytes url: String?) async throws {
        let session = UUID(), key = SigningKeyPair()
        let ana = try await NetworkRelayConnector(relays: [proposer]).join(
            RelayJoinRequest(sessionID: session, displayName: "ana", sessionKey: key, createIfAbsent: true, activity: []))
        let ben = try await NetworkRelayConnector(relays: [reader]).join(
            RelayJoinRequest(sessionID: session, displayName: "ben", sessionKey: key, createIfAbsent: false, activity: []))
        var heard = ben.events.makeAsyncIterator()
        func nextOrdered() async -> Bool {
            while let event = await heard.next() {
                if case .ordered = event { return true }
            }
            return false
        }
        let clock = ContinuousClock()
        // Warm up, then one at a time.
        for _ in 0..<50 {
            try ana.sendOrdered(body)
            _ = await nextOrdered()
        }
        var samples: [Double] = []
        let cpuBefore = cpuSeconds()
        for _ in 0..<count {
            let start = clock.now
            try ana.sendOrdered(body)
            guard await nextOrdered() else { break }
            let elapsed = clock.now - start
            samples.append(Double(elapsed.components.seconds) * 1e3 + Double(elapsed.components.attoseconds) / 1e15)
        }
        let cpuSequential = (cpuSeconds() - cpuBefore) / Double(count)
        samples.sort()
        func percentile(_ p: Double) -> Double { samples[min(samples.count - 1, Int(Double(samples.count) * p))] }
        // A burst: all sent at once, timed until the last is heard.
        let burst = 5 * count
        let burstStart = clock.now
        let cpuBurst = cpuSeconds()
        for _ in 0..<burst { try ana.sendOrdered(body) }
        for _ in 0..<burst { guard await nextOrdered() else { break } }
        let burstTime = clock.now - burstStart
        let seconds = Double(burstTime.components.seconds) + Double(burstTime.components.attoseconds) / 1e18
        let cpuPerBurst = (cpuSeconds() - cpuBurst) / Double(burst)
        var stored = ""
        if let url {
            let connection = try await NATSConnection.connect(to: url)
            let info = try await JetStream(connection: connection).streamInfo(ClusterRelay.stream(for: session))
            stored = String(format: "; JetStream holds %llu messages, %.0f bytes per proposal (256-byte body)",
                            info.state.messages, Double(info.state.bytes) / Double(count + 50 + burst))
            await connection.close()
        }
        print(String(format: "cluster bench %@: ordered delivery one at a time n=%d p50 %.3f ms p99 %.3f ms max %.3f ms, CPU %.0f µs/proposal; burst of %d: %.0f proposals/s, CPU %.0f µs/proposal%@",
                     label, samples.count, percentile(0.5), percentile(0.99), percentile(1), cpuSequential * 1e6, burst,
                     Double(burst) / seconds, cpuPerBurst * 1e6, stored))
        await ana.leave()
        await ben.leave()
    }
}
