import Foundation
import Testing
import TandemCluster
import TandemNet
import TandemWire
import TandemHarness

/// Not a unit test: the load figures in docs/ARCHITECTURE.md, run only when asked
/// (`TANDEM_CLUSTER_BENCH=1 swift test --skip-build --no-parallel --filter ClusterCompactionMeasurementProcessTests`).
/// A session of `count` messages (256 bytes each, ordered proposals among them) on one relay of
/// a one-node NATS; then a relay started afresh is joined, which loads the session from its log:
/// the time from the join's start to its welcome, with compaction (a 256 KiB threshold), with the
/// relay's defaults (16 MiB, or 2,000 entries as heavy as the last snapshot) and without (the
/// threshold and the entries past the log), three joins on three fresh relays each.
@Suite(.serialized, .enabled(if: NATSServerProcess.isAvailable && ProcessInfo.processInfo.environment["TANDEM_CLUSTER_BENCH"] != nil))
struct ClusterCompactionMeasurementProcessTests {
    static let count = Int(ProcessInfo.processInfo.environment["TANDEM_CLUSTER_BENCH_COUNT"] ?? "") ?? 20_000

    @Test func loadWithAndWithoutCompaction() async throws {
        for (threshold, entries, name) in [(256 * 1024, 1 << 40, "compacted (threshold 256 KiB)"), (nil, nil, "the defaults"),
                                           (1 << 40, 1 << 40, "not compacted")] as [(Int?, Int?, String)] {
            let nats = try startNATSNode()
            defer { nats.stop() }
            let relay = try await InProcessRelay.start(nats.url, compactionThreshold: threshold, compactionEntries: entries)
            let session = UUID(), key = SigningKeyPair()
            let ana = try await Participant.join(session, key: key, "ana", relays: [relay.endpoint], create: true)
            let anaID = try #require(ana.link.welcome.participants.first?.id)
            let body = [UInt8](repeating: 0x33, count: 256)
            for index in 0..<Self.count {
                try ana.link.send(body, to: .only([anaID]), reliable: true)
                if index % 500 == 499 {
                    try ana.link.sendOrdered("p\(index)".bytes)
                    let heard = (index + 1) / 500
                    #expect(await ana.wait(30) { $0.ordered.count >= heard })
                }
            }
            // The purge behind the newest snapshot is done (`ClusterRelay.compactionPurgeDelay`).
            try await Task.sleep(for: .seconds(1))
            var samples: [Double] = []
            var reports: [ClusterLoadReport] = []
            for _ in 0..<3 {
                let fresh = try await InProcessRelay.start(nats.url, compactionThreshold: threshold, compactionEntries: entries)
                let start = ContinuousClock.now
                let cat = try await Participant.join(session, key: key, "cat", relays: [fresh.endpoint])
                let elapsed = ContinuousClock.now - start
                samples.append(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
                reports.append(fresh.cluster.loadReport(of: session) ?? ClusterLoadReport())
                #expect(cat.ordered.count == Self.count / 500)
                await cat.link.leave()
                await fresh.stop()
            }
            let replayed = reports.map { "\($0.messages) messages (\($0.entries) entries) after \($0.snapshots) snapshot(s) of \($0.snapshotBytes) bytes" }
            print(String(format: "cluster load: %d messages, %@: join on a fresh relay %.1f / %.1f / %.1f ms; replayed %@",
                         Self.count, name,
                         samples[0] * 1000, samples[1] * 1000, samples[2] * 1000, replayed.joined(separator: "; ")))
            await relay.stop()
        }
    }
}
