import Foundation
import Synchronization
import TandemClock
import TandemNATS

/// The NATS cluster alone in the relays' shape: `chains` compare-and-set chains at once from one
/// client, one per subject as a relay's log is one per session, each publishing its next message
/// (a message id and `Nats-Expected-Last-Subject-Sequence` on the one before, `payloadBytes`)
/// once the last is acknowledged, on the connection's loop as a relay's publisher does
/// (`JetStream.publishAttemptOnLoop`). The stream is one of its own, stored and replicated as the
/// session streams are (file storage, R3 on a three-node cluster). What it says: the commits a
/// second the cluster takes that way, and each commit's latency from publish to acknowledgement.
public struct ClusterCASBenchmark: Sendable {
    /// Chains at once.
    public var chains = 1_000
    /// How long they publish, seconds.
    public var seconds = 5.0
    /// Each message's payload.
    public var payloadBytes = 400

    /// The default shape: 1,000 chains for 5 s, 400-byte messages.
    public init() {}

    /// What one run measured.
    public struct Result: Sendable, Equatable, Codable {
        /// Chains at once.
        public var chains: Int
        /// Commits acknowledged within the run's seconds.
        public var commits: Int
        /// Publishes that failed (a wrong last sequence would be a bug here; timeouts are load).
        public var failures: Int
        /// Commits a second.
        public var perSecond: Double
        /// From publish to acknowledgement (ms).
        public var latency: Percentiles?
    }

    private final class Chains: Sendable {
        struct State {
            var last: [UInt64]
            var sentAt: [Int64]
            var latencies: [Double] = []
            var failures = 0
            var running = 0
        }
        let state: Mutex<State>
        init(_ count: Int) { state = Mutex(State(last: Array(repeating: 0, count: count), sentAt: Array(repeating: 0, count: count))) }
    }

    /// Runs on the NATS cluster at `url` (a stream `TANDEM_BENCH_CAS` is made, and deleted after).
    public func run(url: String, progress: @Sendable (String) -> Void) async throws -> Result {
        let connection = try await NATSConnection.connect(to: url)
        defer { connection.closeAndForget() }
        let jetStream = JetStream(connection: connection)
        let stream = "TANDEM_BENCH_CAS"
        let replicas = connection.serverInfo?.cluster == nil ? 1 : 3
        let configuration = JetStreamStreamConfiguration(name: stream, subjects: ["tandem.bench.cas.*"], storage: .file, replicas: replicas,
                                                         maximumBytes: 256 * 1024 * 1024, maximumMessageSize: 1024 * 1024,
                                                         duplicateWindow: 120_000_000_000)
        let deadline = ContinuousClock.now + .seconds(20)
        while true {
            if let info = try? await jetStream.createStream(configuration), replicas == 1 || info.cluster?.leader != nil { break }
            guard ContinuousClock.now < deadline else { throw BenchmarkError("NATS alone: the stream \(stream) got no leader in 20 s") }
            try await Task.sleep(for: .milliseconds(200))
        }
        progress("NATS alone: \(chains) compare-and-set chains for \(seconds) s")
        let chains = Chains(self.chains)
        let clock = SystemClock()
        let payload = [UInt8](repeating: 0x5A, count: payloadBytes)
        let end = clock.instant().nanoseconds + Int64(seconds * 1e9)
        let started = clock.instant().nanoseconds
        let run = UUID().uuidString.prefix(8)
        @Sendable func publish(_ chain: Int, _ number: Int) {
            let expected = chains.state.withLock { state in
                state.sentAt[chain] = clock.instant().nanoseconds
                return state.last[chain]
            }
            let options = JetStreamPublishOptions(messageID: "\(run)-\(chain)-\(number)", expectedLastSubjectSequence: expected,
                                                  expectedStream: stream)
            jetStream.publishAttemptOnLoop("tandem.bench.cas.\(chain)", payload: payload, options: options) { result in
                let now = clock.instant().nanoseconds
                let next = chains.state.withLock { state -> Bool in
                    var stored = false
                    switch result {
                    case let .success(ack):
                        state.last[chain] = ack.sequence
                        stored = true
                        if now <= end { state.latencies.append(Double(now - state.sentAt[chain]) / 1e6) }
                    case .failure:
                        state.failures += 1
                    }
                    // A failed chain stops: its expected sequence is no longer known.
                    let going = stored && now < end
                    if !going { state.running -= 1 }
                    return going
                }
                if next { publish(chain, number + 1) }
            }
        }
        chains.state.withLock { $0.running = self.chains }
        let count = self.chains
        connection.execute {
            for chain in 0..<count { publish(chain, 1) }
        }
        try await Task.sleep(for: .nanoseconds(max(0, end - clock.instant().nanoseconds)))
        // The acknowledgements in flight at the end, for at most an attempt's timeout.
        let drain = ContinuousClock.now + .seconds(3)
        while chains.state.withLock({ $0.running }) > 0, ContinuousClock.now < drain {
            try await Task.sleep(for: .milliseconds(20))
        }
        let elapsed = Double(end - started) / 1e9
        let (latencies, failures) = chains.state.withLock { ($0.latencies, $0.failures) }
        try? await jetStream.deleteStream(stream)
        return Result(chains: self.chains, commits: latencies.count, failures: failures,
                      perSecond: Double(latencies.count) / elapsed, latency: Percentiles(latencies))
    }
}
