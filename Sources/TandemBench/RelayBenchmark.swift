import CTandemSystem
import Foundation
import TandemClock
import TandemNet
import TandemHarness

/// `tandem bench relay`: a real relay on loopback with real sockets: its own `tandem serve`
/// process when `relayExecutable` is set (the default from the command line), else a
/// `RelayServer` in this process, beside the links as the figures before were taken.
///
/// First the relay's own delivery, with lightweight participants on one epoll thread
/// (`RelayDeliveryProbe`): a session of 200's reliable broadcasts and 1,000 sessions of two
/// evenly paced. Then the same through the full client stack (`NetworkRelayConnector`'s links,
/// their event loops, their events on the cooperative pool): one session of 200 participants,
/// the latency of reliable and unreliable broadcasts, the messages per second that many senders
/// push through, and the memory each participant costs; then 1,000 sessions of two. Every phase
/// is bounded in count and in time.
public struct RelayBenchmark: Sendable {
    /// Participants in the large session.
    public var participants = 200
    /// Broadcasts of each kind for the latency phases.
    public var broadcasts = 100
    /// The pause between broadcasts.
    public var broadcastInterval: Duration = .milliseconds(10)
    /// Senders in the throughput phase.
    public var throughputSenders = 10
    /// Messages each throughput sender sends.
    public var throughputMessages = 100
    /// Sessions of two.
    public var pairs = 1_000
    /// Messages each pair's first participant sends the second.
    public var pairMessages = 10
    /// The pause between rounds of pair messages: 1,000 messages per round every 100 ms offers
    /// 10,000 messages a second, under what the relay sustains, so that latency is not queueing.
    public var pairInterval: Duration = .milliseconds(100)
    /// The evenly paced run of the pairs: messages a second offered, one at a time at its own
    /// instant (every 100 µs at 10,000), from a thread of its own, the same count as the bursty run.
    public var pacedRate = 10_000

    /// The `tandem` executable to run as the relay (`serve`); nil runs the relay in this process.
    public var relayExecutable: String?
    /// Whether the relay's own delivery is measured with lightweight participants first.
    public var measuresRelayDelivery = true
    /// How the relay's loop thread and the probe's pacing and reading threads are scheduled
    /// (`tandem serve --priority`): on a machine busy with other work, `high` or `realtime`
    /// keeps them from waiting behind it. The links of the full-stack phases keep the default.
    public var priority = ThreadPriority.normal
    /// Whether the probe's reading thread busy-polls (`RelayDeliveryProbe.busyPolling`).
    public var busyPolling = false
    /// How many threads the relay writes large broadcasts with (`tandem serve --writer-threads`);
    /// nil leaves the relay's default.
    public var writerThreads: Int?
    /// Whether, with the relay in this process, its own cost is measured by the kernel's
    /// timestamps and its loop thread's CPU time, beside a bare forwarder's
    /// (`RelayBenchmarkReport.KernelTimes`), the relay's loop and the forwarder pinned to one
    /// processor (`tandem bench relay --relay-cost`). Off by default: pinned, the relay's loop
    /// could not move away from other work in the full-stack phases.
    public var measuresKernelTimestamps = false
    /// The processor the relay's loop and the forwarder are pinned to while measured; nil picks
    /// the last this process may run on.
    public var relayCPU: Int?

    /// The defaults above, the relay in this process.
    public init() {}

    /// Runs the relay's own delivery phases alone (`tandem bench relay --delivery-only`): the
    /// large session's broadcasts, the floor beside them and the paced pairs.
    public func runDelivery(progress: @Sendable (String) -> Void) async throws -> RelayBenchmarkReport.Delivery {
        let relay = try startRelay(progress: progress)
        defer { relay.stop() }
        return try await measureDelivery(relay: relay, progress: progress)
    }

    /// Runs every phase; `progress` hears what is happening.
    public func run(progress: @Sendable (String) -> Void) async throws -> RelayBenchmarkReport {
        let relay = try startRelay(progress: progress)
        defer { relay.stop() }
        var delivery: RelayBenchmarkReport.Delivery?
        if measuresRelayDelivery { delivery = try await measureDelivery(relay: relay, progress: progress) }
        let connector = NetworkRelayConnector(host: "127.0.0.1", port: relay.port)
        let clock = SystemClock()
        let recorder = RelayDeliveryRecorder(clock: clock)

        progress("joining \(participants) participants to one session")
        let before = ResidentMemory.bytes()
        let session = UUID()
        var links: [any RelayLink] = []
        for index in 0..<participants {
            let link = try await connector.join(request(session, "p\(index)", create: index == 0))
            recorder.follow(link)
            links.append(link)
        }
        let memoryPerParticipant = Double(ResidentMemory.bytes() - before) / Double(participants)
        try await Task.sleep(for: .milliseconds(200))

        progress("\(broadcasts) reliable broadcasts")
        let reliable = try await broadcast(from: links[0], reliable: true, phase: 0, recorder: recorder)
        progress("\(broadcasts) unreliable broadcasts")
        let unreliable = try await broadcast(from: links[0], reliable: false, phase: 1, recorder: recorder)

        progress("\(throughputSenders) senders × \(throughputMessages) reliable broadcasts, as fast as they go")
        let start = clock.instant().nanoseconds
        for _ in 0..<throughputMessages {
            for sender in links.prefix(throughputSenders) {
                try sender.send(recorder.body(phase: 2), to: .everyone, reliable: true)
            }
        }
        let sent = throughputMessages * throughputSenders
        let delivered = await recorder.wait(for: 2, expected: sent * (participants - 1), timeout: .seconds(120))
        let seconds = Double(recorder.lastDeliveryTime - start) / 1e9
        let throughput = RelayBenchmarkReport.Throughput(
            messages: sent, delivered: delivered, seconds: seconds,
            messagesPerSecond: Double(sent) / seconds, deliveriesPerSecond: Double(delivered) / seconds)
        await leave(links)
        links.removeAll()

        let pairs = try await runPairs(connector: connector, recorder: recorder, progress: progress)
        return RelayBenchmarkReport(participants: participants, reliable: reliable, unreliable: unreliable,
                                    throughput: throughput, memoryPerParticipant: memoryPerParticipant, pairs: pairs,
                                    relayInProcess: relayExecutable == nil, delivery: delivery, priority: priority.rawValue,
                                    busyPolling: measuresRelayDelivery ? busyPolling : nil)
    }

    /// Whether the kernel's timestamps are taken: with the relay in this process only.
    var measuresKernel: Bool { measuresKernelTimestamps && relayExecutable == nil && measuresRelayDelivery }

    private func startRelay(progress: @Sendable (String) -> Void) throws -> RelayBenchmarkRelay {
        let measuring = measuresKernel
        var cpu = relayCPU
        if measuring, cpu == nil {
            var allowed = [Int32](repeating: 0, count: 1024)
            let count = tandem_allowed_cpus(&allowed, Int32(allowed.count))
            if count > 0 { cpu = Int(allowed[Int(count) - 1]) }
        }
        return try RelayBenchmarkRelay(executable: relayExecutable, priority: priority, writerThreads: writerThreads,
                                       measuring: measuring, cpu: measuring ? cpu : nil, progress: progress)
    }

    private func broadcast(from sender: any RelayLink, reliable: Bool, phase: UInt8,
                           recorder: RelayDeliveryRecorder) async throws -> RelayBenchmarkReport.Broadcast {
        for _ in 0..<broadcasts {
            try sender.send(recorder.body(phase: phase), to: .everyone, reliable: reliable)
            try await Task.sleep(for: broadcastInterval)
        }
        let expected = broadcasts * (participants - 1)
        let delivered = await recorder.wait(for: phase, expected: expected, timeout: .seconds(reliable ? 60 : 5))
        return RelayBenchmarkReport.Broadcast(messages: broadcasts, expected: expected, delivered: delivered,
                                              latency: Percentiles(recorder.latencies(phase)))
    }

    private func runPairs(connector: NetworkRelayConnector, recorder: RelayDeliveryRecorder,
                          progress: @Sendable (String) -> Void) async throws -> RelayBenchmarkReport.Pairs {
        progress("joining \(pairs) sessions of two")
        let clock = recorder.clock
        let before = ResidentMemory.bytes()
        var firsts: [any RelayLink] = []
        var joinLatencies: [Double] = []
        var all: [any RelayLink] = []
        // Joined in batches, so that the relay sees many handshakes at once but not thousands.
        for batchStart in stride(from: 0, to: pairs, by: 50) {
            let batch = try await withThrowingTaskGroup(of: (any RelayLink, any RelayLink, Double).self) { group in
                for index in batchStart..<min(batchStart + 50, pairs) {
                    group.addTask {
                        let session = UUID()
                        let first = try await connector.join(request(session, "a\(index)", create: true))
                        let started = clock.instant().nanoseconds
                        let second = try await connector.join(request(session, "b\(index)", create: false))
                        return (first, second, Double(clock.instant().nanoseconds - started))
                    }
                }
                var joined: [(any RelayLink, any RelayLink, Double)] = []
                for try await pair in group { joined.append(pair) }
                return joined
            }
            for (first, second, latency) in batch {
                recorder.follow(second)
                firsts.append(first)
                all += [first, second]
                joinLatencies.append(latency)
            }
        }
        let memoryPerParticipant = Double(ResidentMemory.bytes() - before) / Double(2 * pairs)
        try await Task.sleep(for: .milliseconds(200))

        progress("\(pairMessages) reliable messages in each of \(pairs) sessions")
        let start = clock.instant().nanoseconds
        for _ in 0..<pairMessages {
            for first in firsts { try first.send(recorder.body(phase: 3), to: .everyone, reliable: true) }
            try await Task.sleep(for: pairInterval)
        }
        let expected = pairMessages * pairs
        let delivered = await recorder.wait(for: 3, expected: expected, timeout: .seconds(60))
        let seconds = Double(recorder.lastDeliveryTime - start) / 1e9

        progress("\(expected) reliable messages over \(pairs) sessions, evenly paced at \(pacedRate)/s")
        let pacer = RelayBenchmarkPacer(links: firsts, messages: expected, perSecond: pacedRate, recorder: recorder, phase: 4)
        let lateness = await pacer.run()
        let pacedDelivered = await recorder.wait(for: 4, expected: expected, timeout: .seconds(60))
        await leave(all)
        return RelayBenchmarkReport.Pairs(
            sessions: pairs, joinLatency: Percentiles(joinLatencies), messages: expected, delivered: delivered,
            latency: Percentiles(recorder.latencies(3)), offeredPerSecond: Double(pairs) / (Double(pairInterval.components.seconds) + Double(pairInterval.components.attoseconds) / 1e18),
            messagesPerSecond: Double(delivered) / seconds,
            memoryPerParticipant: memoryPerParticipant,
            paced: RelayBenchmarkReport.PacedPairs(
                offeredPerSecond: Double(pacedRate), messages: expected, delivered: pacedDelivered,
                latency: Percentiles(recorder.latencies(4)), senderLateness: Percentiles(lateness)))
    }

    func request(_ session: UUID, _ name: String, create: Bool) -> RelayJoinRequest {
        RelayJoinRequest(sessionID: session, displayName: name, sessionKey: SigningKeyPair(seed: [UInt8](repeating: 0x42, count: 32)),
                         createIfAbsent: create, activity: [])
    }

    private func leave(_ links: [any RelayLink]) async {
        await withTaskGroup(of: Void.self) { group in
            for link in links { group.addTask { await link.leave() } }
        }
    }
}
