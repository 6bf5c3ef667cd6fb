#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TandemHarness
import TandemClock
import TandemNet
import TandemNATS
import TandemCluster

/// The ordered-delivery row of `tandem bench cluster`: `sessions` sessions of four participants
/// (full client links, `NetworkRelayConnector`, in this process) on one `tandem serve`, then
/// spread over three `tandem serve --cluster` processes on a three-node `nats-server` cluster
/// (participant `p` of session `s` on relay `(s + p) mod 3`, so every session spans all three).
///
/// In each, the first participant of every session proposes, in turn, at an even offered rate
/// (`RelayBenchmarkPacer`, from a thread of its own), and the other three record each proposal
/// as it reaches them (`RelayDeliveryRecorder`): p50 and p99 from proposal to receipt. The rate
/// climbs through `rates`, `stepSeconds` each; the highest whose every proposal arrived with a
/// p99 within `p99Bound` is the rate sustained. Bounded: joins, each step and each drain have
/// deadlines, and the climb stops at the first step that does not hold.
public struct ClusterOrderedBenchmark: Sendable {
    /// Sessions of four.
    public var sessions: Int
    /// Offered proposals per second, all sessions together, in the order tried.
    public var rates: [Int] = [50, 100, 250, 500, 1_000, 2_000, 4_000, 8_000]
    /// How long each rate is offered, seconds.
    public var stepSeconds = 3.0
    /// The p99 from proposal to receipt under which a rate holds (ms).
    public var p99Bound = 50.0
    /// The `tandem` executable to run as the relays.
    public var executable: String
    /// Only the three relays' joins, no proposals and no single relay (`--joins-only`): what a
    /// join refused for a live session needs, run after run.
    public var joinsOnly = false
    /// The NATS cluster alone in the relays' shape, measured on the same cluster before the
    /// relays start (`ClusterCASBenchmark`, one chain per session); nil: not measured.
    public var natsAlone: ClusterCASBenchmark? = ClusterCASBenchmark()

    /// `sessions` sessions of four, relays run by `executable`.
    public init(sessions: Int = 1_000, executable: String) {
        self.sessions = sessions
        self.executable = executable
    }

    /// Participants per session.
    static let participants = 4
    /// The relays' limits, as `tandem bench relay` sets them: every participant comes from 127.0.0.1.
    static let limits = Array(RelayBenchmarkRelay.serveArguments.drop { $0 != "--max-sessions-per-address" })

    /// Runs one relay, then three; `progress` hears what it is doing.
    public func run(progress: @Sendable (String) -> Void) async throws -> ClusterOrderedReport {
        setenv("TANDEM_EXECUTABLE", executable, 1)
        progress("ordered delivery, one relay: starting tandem serve")
        let one: ClusterOrderedReport.Arrangement
        if joinsOnly {
            one = ClusterOrderedReport.Arrangement(name: "one relay", relays: 1, joinSeconds: 0, steps: [], usage: [])
        } else {
            let single = try ServeProcess(arguments: Self.limits)
            defer { single.stop() }
            one = try await arrangement(name: "one relay", relays: [single], nats: [], progress: progress)
        }
        progress("ordered delivery, three relays: starting a three-node nats-server cluster")
        let nats = try NATSTestCluster(size: 3, authentication: .userPassword(user: "tandem", password: "bench-\(UUID().uuidString.prefix(8))"))
        defer { nats.stop() }
        var alone: ClusterCASBenchmark.Result?
        if var natsAlone, !joinsOnly {
            natsAlone.chains = sessions
            natsAlone.rates = rates
            natsAlone.stepSeconds = stepSeconds
            natsAlone.p99Bound = p99Bound
            alone = try await natsAlone.run(url: nats.url, progress: progress)
        }
        var relays: [ServeProcess] = []
        defer { for relay in relays { relay.stop() } }
        for _ in 0..<3 { relays.append(try ServeProcess(arguments: ["--cluster", nats.url] + Self.limits)) }
        let url = nats.url
        let three = try await arrangement(name: "three relays", relays: relays, nats: ClusterPlayersBenchmark.children(named: "nats-server"),
                                          progress: progress, logMessages: { await Self.storedLogMessages(url: url) })
        return ClusterOrderedReport(sessions: sessions, participants: Self.participants, stepSeconds: stepSeconds, p99Bound: p99Bound,
                                    oneRelay: one, threeRelays: three, natsAlone: alone)
    }

    /// How many messages the session streams have taken so far (their last sequences), nil when
    /// NATS cannot say.
    static func storedLogMessages(url: String) async -> UInt64? {
        guard let connection = try? await NATSConnection.connect(to: url) else { return nil }
        let jetStream = JetStream(connection: connection)
        var total: UInt64 = 0
        for shard in 0..<ClusterRelay.streamCount {
            guard let info = try? await jetStream.streamInfo(ClusterRelay.stream(shard: shard)) else {
                await connection.close()
                return nil
            }
            total += info.state.lastSequence
        }
        await connection.close()
        return total
    }

    private func arrangement(name: String, relays: [ServeProcess], nats: [Int32], progress: @Sendable (String) -> Void,
                             logMessages: (@Sendable () async -> UInt64?)? = nil) async throws -> ClusterOrderedReport.Arrangement {
        let sampler = ProcessUsageSampler()
        defer { sampler.stop() }
        let labelled = relays.enumerated().map { ("relay \($0.offset + 1)", $0.element.pid) }
            + nats.enumerated().map { ("nats-server \($0.offset + 1)", $0.element) }
        for entry in labelled { sampler.follow(entry.1) }
        // This process's own CPU (the clients), apart from its children's, which the sampler would add.
        let ownStarted = (cpu: Self.ownCPUSeconds(), wall: SystemClock().instant().nanoseconds)
        var configuration = RelayLinkConfiguration()
        configuration.joinTimeout = 30_000_000_000
        let connectors = relays.map { NetworkRelayConnector(host: "127.0.0.1", port: $0.port, configuration: configuration) }
        let recorder = RelayDeliveryRecorder(clock: SystemClock())
        let clock = SystemClock()

        progress("\(name): joining \(sessions) sessions of \(Self.participants)")
        let joinStarted = clock.instant().nanoseconds
        var proposers: [any RelayLink] = []
        var all: [any RelayLink] = []
        let joinDeadline = joinStarted + 180_000_000_000
        for batchStart in stride(from: 0, to: sessions, by: 25) {
            guard clock.instant().nanoseconds < joinDeadline else { throw BenchmarkError("\(name): \(all.count) links joined in 180 s, not \(sessions * Self.participants)") }
            let batch = try await withThrowingTaskGroup(of: [any RelayLink].self) { group in
                for index in batchStart..<min(batchStart + 25, sessions) {
                    group.addTask {
                        let session = UUID()
                        var links: [any RelayLink] = []
                        for participant in 0..<Self.participants {
                            let connector = connectors[(index + participant) % connectors.count]
                            let request = RelayJoinRequest(
                                sessionID: session, displayName: "s\(index)p\(participant)",
                                sessionKey: SigningKeyPair(seed: [UInt8](repeating: 0x42, count: 32)), createIfAbsent: participant == 0, activity: [])
                            // On a loaded machine a welcome can take longer than a link waits: at most three tries.
                            var attempt = 1
                            while true {
                                do {
                                    links.append(try await connector.join(request))
                                    break
                                } catch let error as RelayError where attempt < 3 && error.code == .timedOut {
                                    attempt += 1
                                } catch {
                                    throw BenchmarkError("\(name): participant \(participant) of session \(index) (\(session)) on relay \((index + participant) % connectors.count + 1), attempt \(attempt): \(error)")
                                }
                            }
                        }
                        return links
                    }
                }
                var joined: [[any RelayLink]] = []
                for try await links in group { joined.append(links) }
                return joined
            }
            for links in batch {
                proposers.append(links[0])
                for reader in links.dropFirst() { recorder.follow(reader) }
                all += links
            }
        }
        let joinSeconds = Double(clock.instant().nanoseconds - joinStarted) / 1e9
        // Let what the joins set going (welcomes, presence to every participant) drain first.
        try await Task.sleep(for: .seconds(5))

        var steps: [ClusterOrderedReport.Step] = []
        let storedBefore = joinsOnly ? nil : await logMessages?()
        progress("\(name): joined in \(joinSeconds) s")
        for (position, rate) in rates.enumerated() where !joinsOnly {
            let phase = UInt8(position + 1)
            let messages = max(1, Int(Double(rate) * stepSeconds))
            progress("\(name): \(messages) proposals offered at \(rate)/s")
            var pacer = RelayBenchmarkPacer(links: proposers, messages: messages, perSecond: rate, recorder: recorder, phase: phase)
            pacer.ordered = true
            let lateness = await pacer.run()
            let expected = messages * (Self.participants - 1)
            let delivered = await recorder.wait(for: phase, expected: expected, timeout: .seconds(20))
            let latency = Percentiles(recorder.latencies(phase).map { $0 / 1e6 })
            let step = ClusterOrderedReport.Step(offeredPerSecond: rate, proposals: messages, expected: expected, delivered: delivered,
                                                 latency: latency, senderLatenessP99: Percentiles(lateness).map { $0.p99 / 1e6 })
            steps.append(step)
            guard step.holds(p99Bound: p99Bound) else { break }
        }
        for entry in labelled { sampler.sample(entry.1) }
        let storedAfter = storedBefore == nil ? nil : await logMessages?()
        let proposals = steps.map(\.proposals).reduce(0, +)
        var perProposal: Double?
        if let storedBefore, let storedAfter, storedAfter >= storedBefore {
            perProposal = Double(storedAfter - storedBefore) / Double(max(proposals, 1))
        }
        let own = (Self.ownCPUSeconds() - ownStarted.cpu) / (Double(SystemClock().instant().nanoseconds - ownStarted.wall) / 1e9) * 100
        progress("\(name): leaving")
        await withTaskGroup(of: Void.self) { group in
            for link in all { group.addTask { await link.leave() } }
        }
        return ClusterOrderedReport.Arrangement(
            name: name, relays: relays.count, joinSeconds: joinSeconds, steps: steps, logMessagesPerProposal: perProposal,
            usage: labelled.map { PeerUsage(peer: $0.0, cpuPercent: sampler.usage(of: $0.1)?.cpuPercent, peakMemoryMiB: nil) }
                + [PeerUsage(peer: "bench process (the client links)", cpuPercent: own, peakMemoryMiB: nil)])
    }

    /// This process's user and system CPU time, seconds (its children's not included).
    static func ownCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }
}
