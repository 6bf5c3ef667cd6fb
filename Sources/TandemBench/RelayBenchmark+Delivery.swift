import Foundation
import TandemClock
import TandemNet

extension RelayBenchmark {
    /// The relay's own delivery with lightweight participants (`RelayDeliveryProbe`): the large
    /// session's reliable broadcasts, then the floor under them (`RelayDeliveryFloor`: the same
    /// sends with no relay), then the sessions of two evenly paced, each participant leaving
    /// before the next phase.
    func measureDelivery(relay: RelayBenchmarkRelay, progress: @Sendable (String) -> Void) async throws -> RelayBenchmarkReport.Delivery {
        let address = try SocketAddress(host: "127.0.0.1", port: relay.port)
        var probe = RelayDeliveryProbe(address: address, phase: 20, priority: priority)
        probe.busyPolling = busyPolling

        progress("relay delivery: joining \(participants) lightweight participants to one session")
        let large = try probe.join(sessions: 1, size: participants)[0]
        try await Task.sleep(for: .milliseconds(200))
        progress("relay delivery: \(broadcasts) reliable broadcasts to \(participants - 1), read on one epoll thread")
        let expected = broadcasts * (participants - 1)
        let broadcastCPU = relay.cpuSeconds
        let broadcastMeter = RelayKernelMeter(relay: relay)
        let broadcast = try await probe.run(senders: [large[0]], watched: large, messages: broadcasts,
                                            interval: Self.nanoseconds(broadcastInterval), expected: expected, timeout: 30_000_000_000)
        let broadcastCPUSeconds = relay.cpuSeconds.flatMap { after in broadcastCPU.map { after - $0 } }
        let broadcastCost = broadcastMeter?.finish(delivered: broadcast.latencies.count, clients: broadcast.latencies)
        for connection in large { connection.leave() }

        // The floor, in the same sitting: the same sends with no relay between.
        progress("relay delivery: the floor, \(broadcasts) broadcasts written by one thread straight to \(participants - 1) loopback readers")
        var floorRun = RelayDeliveryFloor(recipients: participants - 1, phase: 21, priority: priority)
        floorRun.busyPolling = busyPolling
        let floor = try await floorRun.run(messages: broadcasts, interval: Self.nanoseconds(broadcastInterval), timeout: 30_000_000_000)
        var broadcastForwarder: RelayBenchmarkReport.KernelCost?
        if broadcastCost != nil {
            progress("relay delivery: the bare forwarder, \(broadcasts) frames read and written to \(participants - 1) loopback readers, "
                + "stamped by the kernel\(relay.cpu.map { " (pinned to processor \($0))" } ?? "")")
            var forwarder = RelayDeliveryForwarder(senders: 1, recipientsPerSender: participants - 1, phase: 22, priority: priority)
            forwarder.cpu = relay.cpu
            forwarder.busyPolling = busyPolling
            let outcome = try await forwarder.run(messages: broadcasts, interval: Self.nanoseconds(broadcastInterval), timeout: 30_000_000_000)
            broadcastForwarder = RelayBenchmarkReport.KernelCost(outcome)
        }

        progress("relay delivery: joining \(pairs) lightweight sessions of two")
        let sessions = try probe.join(sessions: pairs, size: 2)
        try await Task.sleep(for: .milliseconds(200))
        let messages = pairMessages * pairs
        progress("relay delivery: \(messages) reliable messages over \(pairs) sessions, evenly paced at \(pacedRate)/s")
        let pacedCPU = relay.cpuSeconds
        let pacedMeter = RelayKernelMeter(relay: relay)
        let pacedInterval = 1_000_000_000 / Int64(max(pacedRate, 1))
        let paced = try await probe.run(senders: sessions.map { $0[0] }, watched: sessions.flatMap { $0 }, messages: messages,
                                        interval: pacedInterval, expected: messages, timeout: 30_000_000_000)
        let pacedCPUSeconds = relay.cpuSeconds.flatMap { after in pacedCPU.map { after - $0 } }
        let pacedCost = pacedMeter?.finish(delivered: paced.latencies.count, clients: paced.latencies)
        for session in sessions { for connection in session { connection.leave() } }
        try await Task.sleep(for: .milliseconds(300))
        var kernel: RelayBenchmarkReport.KernelTimes?
        if let broadcastCost, let broadcastForwarder, let pacedCost {
            progress("relay delivery: the bare forwarder, \(messages) frames over \(pairs) senders of one recipient each, "
                + "evenly paced at \(pacedRate)/s, stamped by the kernel")
            var forwarder = RelayDeliveryForwarder(senders: pairs, recipientsPerSender: 1, phase: 23, priority: priority)
            forwarder.cpu = relay.cpu
            forwarder.busyPolling = busyPolling
            let outcome = try await forwarder.run(messages: messages, interval: pacedInterval, timeout: 30_000_000_000)
            kernel = RelayBenchmarkReport.KernelTimes(cpu: relay.cpu, broadcast: broadcastCost, broadcastForwarder: broadcastForwarder,
                                                      paced: pacedCost, pacedForwarder: RelayBenchmarkReport.KernelCost(outcome))
        }
        return RelayBenchmarkReport.Delivery(
            reliable: RelayBenchmarkReport.Broadcast(messages: broadcasts, expected: expected, delivered: broadcast.latencies.count,
                                                     latency: Percentiles(broadcast.latencies)),
            paced: RelayBenchmarkReport.PacedPairs(offeredPerSecond: Double(pacedRate), messages: messages, delivered: paced.latencies.count,
                                                   latency: Percentiles(paced.latencies), senderLateness: Percentiles(paced.lateness)),
            reliableRelayCPUSeconds: broadcastCPUSeconds, pacedRelayCPUSeconds: pacedCPUSeconds,
            floor: RelayBenchmarkReport.Broadcast(messages: broadcasts, expected: expected, delivered: floor.latencies.count,
                                                  latency: Percentiles(floor.latencies)),
            kernel: kernel)
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
    }
}

/// The relay's cost over one phase, in its measuring mode: what it had seen is taken (and
/// dropped) and its loop thread's CPU time read when the phase starts, and both again when it
/// ends. Nil for a relay not in this process or not measuring.
struct RelayKernelMeter {
    private let server: RelayServer
    private let thread: Int32
    private let cpuBefore: TimeSpan
    private let drainBefore: TimeSpan

    init?(relay: RelayBenchmarkRelay) {
        guard let server = relay.server, let thread = relay.loopThread, let taken = server.takeKernelTimestamps(),
              let cpu = SocketTimestamping.cpuTime(ofThread: thread) else { return nil }
        self.server = server
        self.thread = thread
        cpuBefore = cpu
        drainBefore = taken.drainTime
    }

    /// The phase's figures; `delivered` and `clients` are what the recipients read.
    func finish(delivered: Int, clients: [Double]) -> RelayBenchmarkReport.KernelCost? {
        guard let taken = server.takeKernelTimestamps(), let cpu = SocketTimestamping.cpuTime(ofThread: thread) else { return nil }
        let drain = taken.drainTime - drainBefore
        return RelayBenchmarkReport.KernelCost(ledger: taken.ledger, cpu: cpu - cpuBefore - drain, drain: drain,
                                               frames: taken.framesQueued, delivered: delivered, clients: clients)
    }
}

extension RelayBenchmarkReport.KernelCost {
    /// The bare forwarder's figures.
    init(_ outcome: RelayDeliveryForwarder.Outcome) {
        self.init(ledger: outcome.ledger, cpu: outcome.cpuTime, drain: outcome.drainTime, frames: outcome.ledger.copies,
                  delivered: outcome.clients.latencies.count, clients: outcome.clients.latencies)
    }
}
