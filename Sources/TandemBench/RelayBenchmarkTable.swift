/// Renders a relay benchmark report as a plain-text table.
public enum RelayBenchmarkTable {
    /// The whole report.
    public static func render(_ report: RelayBenchmarkReport) -> String {
        let duration = ClockBenchmarkTable.duration
        var lines: [String] = []
        lines.append("relay on loopback (real sockets; relay and links in one process)")
        lines.append("")
        lines.append("one session of \(report.participants) participants")
        lines.append("  " + [pad("broadcast", 12), pad("delivered", 18, right: true), pad("p50", 10, right: true),
                             pad("p90", 10, right: true), pad("p99", 10, right: true), pad("max", 10, right: true)].joined(separator: " "))
        for (name, broadcast) in [("reliable", report.reliable), ("unreliable", report.unreliable)] {
            lines.append("  " + [
                pad(name, 12), pad("\(broadcast.delivered)/\(broadcast.expected)", 18, right: true),
                pad(duration(broadcast.latency?.p50), 10, right: true), pad(duration(broadcast.latency?.p90), 10, right: true),
                pad(duration(broadcast.latency?.p99), 10, right: true), pad(duration(broadcast.latency?.max), 10, right: true),
            ].joined(separator: " "))
        }
        let throughput = report.throughput
        lines.append("  throughput: \(throughput.messages) messages, \(throughput.delivered) deliveries in \(fixed(throughput.seconds, 2)) s: "
            + "\(Int(throughput.messagesPerSecond)) messages/s in, \(Int(throughput.deliveriesPerSecond)) deliveries/s out")
        lines.append("  memory: \(kibibytes(report.memoryPerParticipant)) per participant (RSS delta / participants)")
        lines.append("")
        let pairs = report.pairs
        lines.append("\(pairs.sessions) sessions of two")
        lines.append("  join: p50 \(duration(pairs.joinLatency?.p50)), p99 \(duration(pairs.joinLatency?.p99))")
        lines.append("  reliable messages: \(pairs.delivered)/\(pairs.messages) delivered, p50 \(duration(pairs.latency?.p50)), "
            + "p99 \(duration(pairs.latency?.p99)), \(Int(pairs.messagesPerSecond)) messages/s (offered \(Int(pairs.offeredPerSecond))/s)")
        lines.append("  memory: \(kibibytes(pairs.memoryPerParticipant)) per participant")
        return lines.joined(separator: "\n") + "\n"
    }

    private static func kibibytes(_ bytes: Double) -> String { "\(fixed(bytes / 1024, 1)) KiB" }

    private static func fixed(_ value: Double, _ decimals: Int) -> String {
        guard value.isFinite else { return "-" }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        return String((value * scale).rounded() / scale)
    }

    private static func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        let padding = String(repeating: " ", count: max(width - text.count, 0))
        return right ? padding + text : text + padding
    }
}
