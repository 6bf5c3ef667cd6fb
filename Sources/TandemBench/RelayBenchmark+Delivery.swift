import Foundation
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
        let broadcast = try await probe.run(senders: [large[0]], watched: large, messages: broadcasts,
                                            interval: Self.nanoseconds(broadcastInterval), expected: expected, timeout: 30_000_000_000)
        let broadcastCPUSeconds = relay.cpuSeconds.flatMap { after in broadcastCPU.map { after - $0 } }
        for connection in large { connection.leave() }

        // The floor, in the same sitting: the same sends with no relay between.
        progress("relay delivery: the floor, \(broadcasts) broadcasts written by one thread straight to \(participants - 1) loopback readers")
        var floorRun = RelayDeliveryFloor(recipients: participants - 1, phase: 21, priority: priority)
        floorRun.busyPolling = busyPolling
        let floor = try await floorRun.run(messages: broadcasts, interval: Self.nanoseconds(broadcastInterval), timeout: 30_000_000_000)

        progress("relay delivery: joining \(pairs) lightweight sessions of two")
        let sessions = try probe.join(sessions: pairs, size: 2)
        try await Task.sleep(for: .milliseconds(200))
        let messages = pairMessages * pairs
        progress("relay delivery: \(messages) reliable messages over \(pairs) sessions, evenly paced at \(pacedRate)/s")
        let pacedCPU = relay.cpuSeconds
        let paced = try await probe.run(senders: sessions.map { $0[0] }, watched: sessions.flatMap { $0 }, messages: messages,
                                        interval: 1_000_000_000 / Int64(max(pacedRate, 1)), expected: messages, timeout: 30_000_000_000)
        let pacedCPUSeconds = relay.cpuSeconds.flatMap { after in pacedCPU.map { after - $0 } }
        for session in sessions { for connection in session { connection.leave() } }
        try await Task.sleep(for: .milliseconds(300))
        return RelayBenchmarkReport.Delivery(
            reliable: RelayBenchmarkReport.Broadcast(messages: broadcasts, expected: expected, delivered: broadcast.latencies.count,
                                                     latency: Percentiles(broadcast.latencies)),
            paced: RelayBenchmarkReport.PacedPairs(offeredPerSecond: Double(pacedRate), messages: messages, delivered: paced.latencies.count,
                                                   latency: Percentiles(paced.latencies), senderLateness: Percentiles(paced.lateness)),
            reliableRelayCPUSeconds: broadcastCPUSeconds, pacedRelayCPUSeconds: pacedCPUSeconds,
            floor: RelayBenchmarkReport.Broadcast(messages: broadcasts, expected: expected, delivered: floor.latencies.count,
                                                  latency: Percentiles(floor.latencies)))
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
    }
}
