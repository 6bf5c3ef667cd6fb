import Foundation
import Synchronization
import TandemClock
import TandemCluster
import TandemNATS

/// The NATS cluster alone in the relays' shape: `chains` compare-and-set chains from one client,
/// one per subject as a relay's log is one per session, spread over as many streams as the
/// relays' sessions are (`ClusterRelay.streamCount`), each publishing its next message (a
/// message id and `Nats-Expected-Last-Subject-Sequence` on the one before, `payloadBytes`) once
/// the last is acknowledged, on the connection's loop as a relay's publisher does
/// (`JetStream.publishAttemptOnLoop`). The streams are its own, stored and replicated as the
/// session streams are (file storage, R3 on a three-node cluster).
///
/// Two measurements: every chain with a publish in flight at all times for `seconds` (the most
/// commits a second the cluster takes this way, its latency mostly queueing), then, when asked
/// (`rates`), commits offered evenly at each rate in turn over the same chains, as the relays'
/// proposals are offered, `stepSeconds` each: each commit's latency from publish to
/// acknowledgement at that rate, up to the first rate whose p99 exceeds `p99Bound`.
public struct ClusterCASBenchmark: Sendable {
    /// Chains at once.
    public var chains = 1_000
    /// How long they publish, seconds.
    public var seconds = 5.0
    /// Each message's payload.
    public var payloadBytes = 400
    /// Streams the chains are spread over, chain `c` on stream `c mod streams`.
    public var streams = ClusterRelay.streamCount
    /// Offered commits a second, all chains together, in the order tried (none: not paced).
    public var rates: [Int] = []
    /// How long each rate is offered, seconds.
    public var stepSeconds = 3.0
    /// The p99 from publish to acknowledgement under which a rate holds (ms).
    public var p99Bound = 50.0

    /// The default shape: 1,000 chains for 5 s, 400-byte messages, not paced.
    public init() {}

    /// One offered rate.
    public struct Step: Sendable, Equatable, Codable {
        /// Commits offered per second, all chains together, evenly.
        public var offeredPerSecond: Int
        /// Publishes offered.
        public var offered: Int
        /// Acknowledged.
        public var commits: Int
        /// Offered while the chain's last publish was still in flight, and not sent (a relay
        /// would batch it with the next).
        public var skipped: Int
        /// Publishes that failed.
        public var failures: Int
        /// From publish to acknowledgement (ms).
        public var latency: Percentiles?

        /// Whether every publish sent was acknowledged with a p99 within `p99Bound` ms.
        public func holds(p99Bound: Double) -> Bool {
            guard failures == 0, commits + skipped >= offered, let latency else { return false }
            return latency.p99 <= p99Bound
        }
    }

    /// What one run measured.
    public struct Result: Sendable, Equatable, Codable {
        /// Chains at once.
        public var chains: Int
        /// Streams they were spread over.
        public var streams: Int = 1
        /// Commits acknowledged within the run's seconds.
        public var commits: Int
        /// Publishes that failed (a wrong last sequence would be a bug here; timeouts are load).
        public var failures: Int
        /// Commits a second.
        public var perSecond: Double
        /// From publish to acknowledgement (ms).
        public var latency: Percentiles?
        /// The paced rates tried, in order; the last is the first that did not hold (or the last asked).
        public var paced: [Step]? = nil

        /// The highest paced rate that held, if any.
        public func sustained(p99Bound: Double) -> Int? {
            (paced ?? []).filter { $0.holds(p99Bound: p99Bound) }.map(\.offeredPerSecond).max()
        }
    }

    private final class Chains: Sendable {
        struct State {
            var last: [UInt64]
            var sentAt: [Int64]
            var busy: [Bool]
            var latencies: [Double] = []
            var failures = 0
            var running = 0
            var skipped = 0
            var issued = 0
        }
        let state: Mutex<State>
        init(_ count: Int) {
            state = Mutex(State(last: Array(repeating: 0, count: count), sentAt: Array(repeating: 0, count: count),
                                busy: Array(repeating: false, count: count)))
        }
    }

    /// The stream of chain `chain` and its subject in phase `phase`.
    private func subject(_ chain: Int, phase: Int) -> (stream: String, subject: String) {
        let shard = chain % max(streams, 1)
        return ("TANDEM_BENCH_CAS_\(shard)", "tandem.bench.cas.\(shard).\(phase).\(chain)")
    }

    /// Runs on the NATS cluster at `url` (streams `TANDEM_BENCH_CAS_<n>` are made, and deleted after;
    /// together they may hold 192 MiB, within the 256 MiB of file storage a test server has).
    public func run(url: String, progress: @Sendable (String) -> Void) async throws -> Result {
        let connection = try await NATSConnection.connect(to: url)
        defer { connection.closeAndForget() }
        let jetStream = JetStream(connection: connection)
        let replicas = connection.serverInfo?.cluster == nil ? 1 : 3
        let names = (0..<max(streams, 1)).map { "TANDEM_BENCH_CAS_\($0)" }
        for (shard, stream) in names.enumerated() {
            let configuration = JetStreamStreamConfiguration(name: stream, subjects: ["tandem.bench.cas.\(shard).>"], storage: .file,
                                                             replicas: replicas, maximumBytes: 192 * 1024 * 1024 / names.count,
                                                             maximumMessageSize: 1024 * 1024, duplicateWindow: 120_000_000_000)
            let deadline = ContinuousClock.now + .seconds(20)
            while true {
                if let info = try? await jetStream.createStream(configuration), replicas == 1 || info.cluster?.leader != nil { break }
                guard ContinuousClock.now < deadline else { throw BenchmarkError("NATS alone: the stream \(stream) got no leader in 20 s") }
                try await Task.sleep(for: .milliseconds(200))
            }
        }
        progress("NATS alone: \(chains) compare-and-set chains over \(names.count) streams for \(seconds) s")
        var result = try await closedLoop(connection, jetStream)
        var steps: [Step] = []
        for (position, rate) in rates.enumerated() {
            progress("NATS alone: \(Int(Double(rate) * stepSeconds)) commits offered at \(rate)/s")
            let step = try await paced(connection, jetStream, rate: rate, phase: position + 2)
            steps.append(step)
            guard step.holds(p99Bound: p99Bound) else { break }
        }
        if !rates.isEmpty { result.paced = steps }
        for stream in names { try? await jetStream.deleteStream(stream) }
        return result
    }

    /// Publishes chain `chain`'s next message in `phase`, on the loop; `done` hears whether it
    /// was stored, at the instant its answer came.
    private func publish(_ jetStream: JetStream, _ chains: Chains, chain: Int, number: Int, phase: Int, run: Substring,
                         clock: SystemClock, done: @escaping @Sendable (Bool, Int64) -> Void) {
        let (stream, subject) = subject(chain, phase: phase)
        let expected = chains.state.withLock { state in
            state.sentAt[chain] = clock.instant().nanoseconds
            state.busy[chain] = true
            return state.last[chain]
        }
        let options = JetStreamPublishOptions(messageID: "\(run)-\(phase)-\(chain)-\(number)", expectedLastSubjectSequence: expected,
                                              expectedStream: stream)
        jetStream.publishAttemptOnLoop(subject, payload: [UInt8](repeating: 0x5A, count: payloadBytes), options: options) { result in
            let now = clock.instant().nanoseconds
            let stored = chains.state.withLock { state -> Bool in
                state.busy[chain] = false
                switch result {
                case let .success(ack):
                    state.last[chain] = ack.sequence
                    return true
                case .failure:
                    state.failures += 1
                    return false
                }
            }
            done(stored, now)
        }
    }

    /// Every chain with a publish in flight for `seconds`.
    private func closedLoop(_ connection: NATSConnection, _ jetStream: JetStream) async throws -> Result {
        let chains = Chains(self.chains)
        let clock = SystemClock()
        let end = clock.instant().nanoseconds + Int64(seconds * 1e9)
        let started = clock.instant().nanoseconds
        let run = UUID().uuidString.prefix(8)
        @Sendable func next(_ chain: Int, _ number: Int) {
            publish(jetStream, chains, chain: chain, number: number, phase: 1, run: run, clock: clock) { stored, now in
                let going = chains.state.withLock { state -> Bool in
                    if stored, now <= end { state.latencies.append(Double(now - state.sentAt[chain]) / 1e6) }
                    // A failed chain stops: its expected sequence is no longer known.
                    let going = stored && now < end
                    if !going { state.running -= 1 }
                    return going
                }
                if going { next(chain, number + 1) }
            }
        }
        chains.state.withLock { $0.running = self.chains }
        let count = self.chains
        connection.execute {
            for chain in 0..<count { next(chain, 1) }
        }
        try await Task.sleep(for: .nanoseconds(max(0, end - clock.instant().nanoseconds)))
        // The acknowledgements in flight at the end, for at most an attempt's timeout.
        let drain = ContinuousClock.now + .seconds(3)
        while chains.state.withLock({ $0.running }) > 0, ContinuousClock.now < drain {
            try await Task.sleep(for: .milliseconds(20))
        }
        let elapsed = Double(end - started) / 1e9
        let (latencies, failures) = chains.state.withLock { ($0.latencies, $0.failures) }
        return Result(chains: self.chains, streams: max(streams, 1), commits: latencies.count, failures: failures,
                      perSecond: Double(latencies.count) / elapsed, latency: Percentiles(latencies))
    }

    /// `rate` commits a second for `stepSeconds`, chain after chain in turn, from a timer on the
    /// connection's loop every millisecond that sends what is due by then.
    private func paced(_ connection: NATSConnection, _ jetStream: JetStream, rate: Int, phase: Int) async throws -> Step {
        let chains = Chains(self.chains)
        let clock = SystemClock()
        let offered = max(1, Int(Double(rate) * stepSeconds))
        let run = UUID().uuidString.prefix(8)
        let count = self.chains
        let started = clock.instant().nanoseconds
        @Sendable func tick() {
            let now = clock.instant().nanoseconds
            let due = min(offered, Int(Double(now - started) * Double(rate) / 1e9) + 1)
            let sends = chains.state.withLock { state -> [(chain: Int, number: Int)] in
                var sends: [(chain: Int, number: Int)] = []
                while state.issued < due {
                    let chain = state.issued % count
                    state.issued += 1
                    if state.busy[chain] {
                        state.skipped += 1
                    } else {
                        state.busy[chain] = true
                        sends.append((chain, state.issued))
                    }
                }
                return sends
            }
            for (chain, number) in sends {
                publish(jetStream, chains, chain: chain, number: number, phase: phase, run: run, clock: clock) { stored, now in
                    chains.state.withLock { state in
                        if stored { state.latencies.append(Double(now - state.sentAt[chain]) / 1e6) }
                    }
                }
            }
            if due < offered { _ = connection.schedule(after: .init(nanoseconds: 1_000_000)) { tick() } }
        }
        connection.execute { tick() }
        // The offer, then its acknowledgements, for at most an attempt's timeout more.
        let deadline = ContinuousClock.now + .seconds(stepSeconds + 5)
        while ContinuousClock.now < deadline {
            let settled = chains.state.withLock { $0.issued >= offered && $0.latencies.count + $0.failures + $0.skipped >= offered }
            if settled { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        return chains.state.withLock { state in
            Step(offeredPerSecond: rate, offered: offered, commits: state.latencies.count, skipped: state.skipped, failures: state.failures,
                 latency: Percentiles(state.latencies))
        }
    }
}
