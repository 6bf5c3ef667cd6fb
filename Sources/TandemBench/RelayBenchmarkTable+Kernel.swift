extension RelayBenchmarkTable {
    /// The relay's own cost beside the bare forwarder's (`RelayBenchmarkReport.KernelTimes`).
    static func kernelLines(_ kernel: RelayBenchmarkReport.KernelTimes, participants: Int, pairs: Int) -> [String] {
        let duration = ClockBenchmarkTable.duration
        let pinned = kernel.cpu.map { "the relay's loop and the forwarder pinned to processor \($0)" } ?? "not pinned"
        var lines = [
            "the relay's own cost by the kernel's timestamps (\(pinned); arrival: the software receive stamp of the read "
                + "that brought the frame; scheduler/sent: the copy's transmit stamps; CPU: the forwarding thread's, error-queue reads left out)",
            "  " + [cell("", 22), cell("records", 8, right: true), cell("→scheduler p50/p99", 20, right: true),
                    cell("→sent p50/p99", 20, right: true), cell("→last sent p50/p99", 20, right: true),
                    cell("CPU/delivery", 13, right: true), cell("readers saw p50/p99", 22, right: true)].joined(separator: " "),
        ]
        let pair = { (percentiles: Percentiles?) in "\(duration(percentiles?.p50)) / \(duration(percentiles?.p99))" }
        let row = { (name: String, cost: RelayBenchmarkReport.KernelCost) in
            "  " + [cell(name, 22), cell("\(cost.records)", 8, right: true), cell(pair(cost.toScheduler), 20, right: true),
                    cell(pair(cost.toDevice), 20, right: true), cell(pair(cost.lastToDevice), 20, right: true),
                    cell(cost.cpuMicrosecondsPerDelivery.map { "\(rounded($0, 2)) µs" } ?? "-", 13, right: true),
                    cell(pair(cost.clients), 22, right: true)].joined(separator: " ")
                + (cost.unmatched > 0 ? "  (\(cost.unmatched) copies unstamped)" : "")
        }
        let ratio = { (relay: Double?, floor: Double?) -> String in
            guard let relay, let floor, floor > 0 else { return "-" }
            return "\(rounded(relay / floor, 2))×"
        }
        lines.append(row("broadcast, relay", kernel.broadcast))
        lines.append(row("broadcast, forwarder", kernel.broadcastForwarder))
        lines.append(row("\(pairs) pairs, relay", kernel.paced))
        lines.append(row("\(pairs) pairs, forwarder", kernel.pacedForwarder))
        lines.append("  relay ÷ forwarder: broadcast to \(participants - 1): arrival → last sent p99 "
            + "\(ratio(kernel.broadcast.lastToDevice?.p99, kernel.broadcastForwarder.lastToDevice?.p99)) (goal ≤ 1.2×), "
            + "CPU per delivery \(ratio(kernel.broadcast.cpuMicrosecondsPerDelivery, kernel.broadcastForwarder.cpuMicrosecondsPerDelivery)) (goal ≤ 1.5×); "
            + "pairs: arrival → sent p99 \(duration(kernel.paced.toDevice?.p99)) (goal ≤ 0.5 ms), "
            + "CPU per delivery \(ratio(kernel.paced.cpuMicrosecondsPerDelivery, kernel.pacedForwarder.cpuMicrosecondsPerDelivery)) (goal ≤ 1×)")
        let perCopy = { (count: Int?, cost: RelayBenchmarkReport.KernelCost) in
            count.map { rounded(Double($0) / Double(max(cost.copies, 1)), 2) } ?? "-"
        }
        lines.append("  per copy, frames queued (deliveries, acknowledgements, pongs) and writes: broadcast relay "
            + "\(perCopy(kernel.broadcast.frames, kernel.broadcast)) and \(perCopy(kernel.broadcast.writes, kernel.broadcast)), "
            + "forwarder \(perCopy(kernel.broadcastForwarder.frames, kernel.broadcastForwarder)) and "
            + "\(perCopy(kernel.broadcastForwarder.writes, kernel.broadcastForwarder)); pairs relay \(perCopy(kernel.paced.frames, kernel.paced)) "
            + "and \(perCopy(kernel.paced.writes, kernel.paced)), forwarder \(perCopy(kernel.pacedForwarder.frames, kernel.pacedForwarder)) "
            + "and \(perCopy(kernel.pacedForwarder.writes, kernel.pacedForwarder))")
        let drains = [kernel.broadcast, kernel.broadcastForwarder, kernel.paced, kernel.pacedForwarder]
            .map { $0.drainSeconds.map { "\(rounded($0 * 1e3, 1)) ms" } ?? "-" }
        lines.append("  the measuring's own CPU (error-queue reads, left out above): relay \(drains[0]) and \(drains[2]), "
            + "forwarder \(drains[1]) and \(drains[3])")
        return lines
    }

    private static func cell(_ text: String, _ width: Int, right: Bool = false) -> String {
        let padding = String(repeating: " ", count: max(width - text.count, 0))
        return right ? padding + text : text + padding
    }

    private static func rounded(_ value: Double, _ decimals: Int) -> String {
        guard value.isFinite else { return "-" }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        return String((value * scale).rounded() / scale)
    }
}
