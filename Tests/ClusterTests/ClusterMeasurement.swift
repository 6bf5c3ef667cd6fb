#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import TandemCluster
import TandemNATS
import TandemNet
import TandemWire
import TandemHarness

/// Not a unit test: the figures in docs/SCALING.md, run only when asked
/// (`TANDEM_CLUSTER_BENCH=1 swift test --skip-build --no-parallel --filter ClusterMeasurementProcessTests`).
/// Side by side in one run: one relay alone, and two relays on a three-node NATS cluster (R3)
/// with the proposer on one and the reader on the other. For each: ordered delivery latency
/// (a proposal sent, then heard by the other participant: p50, p99), one at a time; the rate of
/// a burst of proposals; the process's CPU time per proposal (relays and clients together; the
/// NATS servers are other processes); what JetStream stores per proposal.
@Suite(.serialized, .enabled(if: NATSServerProcess.isAvailable && ProcessInfo.processInfo.environment["TANDEM_CLUSTER_BENCH"] != nil))
struct ClusterMeasurementProcessTests {
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

/// Not a unit test: what a relay pays to load a session by replaying its log with no snapshot
/// (`TANDEM_CLUSTER_BENCH=1 swift test --skip-build --no-parallel --filter ClusterReplayMeasurementIOTests`):
/// a session of four participants, `count` proposals and a cursor per participant every ten
/// proposals, applied to a fresh core.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["TANDEM_CLUSTER_BENCH"] != nil))
struct ClusterReplayMeasurementIOTests {
    @Test func replayCost() {
        let count = 20_000
        let session = UUID()
        let people = (0..<4).map { _ in SigningKeyPair() }.map { key in
            RelayParticipantEntry(id: RelayAuthenticator.participantID(for: key.publicKey), publicKey: key.publicKey, displayName: "p")
        }
        var log: [ClusterLogEntry] = people.enumerated().map { index, entry in
            ClusterLogEntry(session: session, relay: 1, connection: UInt64(index), event: .joined(
                participant: entry, token: [UInt8](repeating: UInt8(index), count: 16), verifier: index == 0 ? SigningKeyPair().publicKey : nil,
                activity: []))
        }
        var sequences = [UInt64](repeating: 0, count: 4)
        for index in 0..<count {
            let who = index % 4
            sequences[who] += 1
            log.append(ClusterLogEntry(session: session, relay: 1, connection: UInt64(who), event: .frame(
                participant: people[who].id, frame: .proposal(sequence: sequences[who], retention: .playback, body: [UInt8](repeating: 1, count: 256)),
                orderedAt: Int64(index), effectiveAt: Int64(index) + 1)))
            if index % 10 == 9 {
                for person in people { log.append(ClusterLogEntry(session: session, relay: 1, connection: 0, event: .cursor(participant: person.id, through: UInt64(index)))) }
            }
        }
        let encoded = log.map { ClusterLogCodec.encode([$0]) }
        let clock = ContinuousClock()
        let start = clock.now
        var core = RelayCore()
        core.enableCluster(relay: 2)
        for message in encoded {
            for entry in (try? ClusterLogCodec.decode(message)) ?? [] { _ = core.applyCluster(entry, at: 0) }
        }
        let elapsed = clock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        #expect(core.participants(of: session).count == 4)
        print(String(format: "cluster replay: %d entries (%d proposals) decoded and applied in %.3f s, %.1f µs per entry",
                     log.count, count, seconds, seconds * 1e6 / Double(log.count)))
    }
}

/// Not a unit test: how many compare-and-set commits one R3 stream takes per second when many
/// sessions append at once (`TANDEM_CLUSTER_BENCH=1 swift test --skip-build --no-parallel
/// --filter ClusterStreamRateMeasurementProcessTests`): `chains` subjects, each appended one at a time with
/// its expected last subject sequence, as a relay appends a session's batches.
@Suite(.enabled(if: NATSServerProcess.isAvailable && ProcessInfo.processInfo.environment["TANDEM_CLUSTER_BENCH"] != nil))
struct ClusterStreamRateMeasurementProcessTests {
    @Test func commitsPerSecond() async throws {
        let nats = try startNATSCluster()
        defer { nats.stop() }
        let connection = try await NATSConnection.connect(to: nats.url)
        let jetStream = JetStream(connection: connection)
        let configuration = JetStreamStreamConfiguration(name: "RATE", subjects: ["rate.*"], storage: .file, replicas: 3,
                                                         duplicateWindow: 120_000_000_000)
        for _ in 0..<150 {
            if let info = try? await jetStream.createStream(configuration), info.cluster?.leader != nil { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        for chains in [1, 16, 64] {
            let perChain = 3000 / chains
            let payload = [UInt8](repeating: 0x5A, count: 400)
            let clock = ContinuousClock()
            let start = clock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for chain in 0..<chains {
                    group.addTask {
                        var last: UInt64 = 0
                        for index in 0..<perChain {
                            let ack = try await jetStream.publish("rate.c\(chains)-\(chain)", payload: payload, options: JetStreamPublishOptions(
                                messageID: "r\(chains)-\(chain)-\(index)", expectedLastSubjectSequence: last))
                            last = ack.sequence
                        }
                    }
                }
                try await group.waitForAll()
            }
            let elapsed = clock.now - start
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            print(String(format: "cluster stream rate: R3, %d sessions appending at once: %.0f commits/s", chains, Double(perChain * chains) / seconds))
        }
        await connection.close()
    }
}
