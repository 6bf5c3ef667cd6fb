/// Renders a relay benchmark report as a plain-text table.
public enum RelayBenchmarkTable {
    /// The relay's own delivery alone (`--delivery-only`), for `participants` in the large
    /// session and `pairs` sessions of two.
    public static func render(_ delivery: RelayBenchmarkReport.Delivery, participants: Int, pairs: Int) -> String {
        let duration = ClockBenchmarkTable.duration
        let row = { (name: String, broadcast: RelayBenchmarkReport.Broadcast) in
            "  \(name): \(broadcast.delivered)/\(broadcast.expected) delivered, p50 \(duration(broadcast.latency?.p50)), "
                + "p99 \(duration(broadcast.latency?.p99)), max \(duration(broadcast.latency?.max))"
        }
        var lines = ["relay delivery only (lightweight relay-protocol participants, no client stack)"]
        lines.append(row("\(participants) participants, reliable broadcast (target p99 ≤ 2 ms)", delivery.reliable))
        if let floor = delivery.floor { lines.append(row("the floor, no relay", floor)) }
        let paced = delivery.paced
        lines.append("  \(pairs) sessions of two, paced \(Int(paced.offeredPerSecond))/s: \(paced.delivered)/\(paced.messages) delivered, "
            + "p50 \(duration(paced.latency?.p50)), p99 \(duration(paced.latency?.p99)) (target ≤ 5 ms), max \(duration(paced.latency?.max))")
        if let kernel = delivery.kernel {
            lines.append("")
            lines += kernelLines(kernel, participants: participants, pairs: pairs)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The whole report.
    public static func render(_ report: RelayBenchmarkReport) -> String {
        let duration = ClockBenchmarkTable.duration
        var lines: [String] = []
        let inProcess = report.relayInProcess ?? true
        lines.append(inProcess ? "relay on loopback (real sockets; relay and links in one process)"
            : "relay on loopback (real sockets; the relay: its own `tandem serve` process)")
        if let priority = report.priority, priority != "normal" {
            lines.append("the relay's thread and the probe's threads at priority \(priority) (`--priority`); the links' at the default")
        }
        if let delivery = report.delivery {
            lines.append("")
            lines.append("relay delivery (lightweight relay-protocol participants read on one epoll thread, no client stack"
                + (report.busyPolling == true ? "; the reader busy-polls, so the relay's sends wake nobody)" : ")"))
            let reliable = delivery.reliable
            lines.append("  \(report.participants) participants, reliable broadcast: \(reliable.delivered)/\(reliable.expected) delivered, "
                + "p50 \(duration(reliable.latency?.p50)), p90 \(duration(reliable.latency?.p90)), p99 \(duration(reliable.latency?.p99)) "
                + "(target ≤ 2 ms), max \(duration(reliable.latency?.max))")
            if let floor = delivery.floor {
                lines.append("  the floor, the same sends from one thread with no relay: \(floor.delivered)/\(floor.expected) delivered, "
                    + "p50 \(duration(floor.latency?.p50)), p90 \(duration(floor.latency?.p90)), p99 \(duration(floor.latency?.p99)), "
                    + "max \(duration(floor.latency?.max))")
            }
            let paced = delivery.paced
            lines.append("  \(report.pairs.sessions) sessions of two, evenly paced (\(Int(paced.offeredPerSecond))/s): "
                + "\(paced.delivered)/\(paced.messages) delivered, p50 \(duration(paced.latency?.p50)), "
                + "p99 \(duration(paced.latency?.p99)) (target ≤ 5 ms), max \(duration(paced.latency?.max)); "
                + "sender late p99 \(duration(paced.senderLateness?.p99))")
            if let broadcastCPU = delivery.reliableRelayCPUSeconds, let pacedCPU = delivery.pacedRelayCPUSeconds {
                lines.append("  relay CPU: \(fixed(broadcastCPU * 1e6 / Double(max(reliable.delivered, 1)), 2)) µs per broadcast delivery "
                    + "(\(fixed(broadcastCPU * 1e3 / Double(max(reliable.messages, 1)), 2)) ms per broadcast to \(report.participants - 1)), "
                    + "\(fixed(pacedCPU * 1e6 / Double(max(paced.delivered, 1)), 2)) µs per paced message (relay process, user + system)")
            }
            if let kernel = delivery.kernel {
                lines.append("")
                lines += kernelLines(kernel, participants: report.participants, pairs: report.pairs.sessions)
            }
        }
        lines.append("")
        lines.append("full stack (the links of `NetworkRelayConnector`, their events on the cooperative pool)")
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
        lines.append("  memory: \(kibibytes(report.memoryPerParticipant)) per participant (RSS delta / participants, "
            + (inProcess ? "relay and links)" : "links only)"))
        lines.append("")
        let pairs = report.pairs
        lines.append("\(pairs.sessions) sessions of two")
        lines.append("  join: p50 \(duration(pairs.joinLatency?.p50)), p99 \(duration(pairs.joinLatency?.p99))")
        lines.append("  reliable messages, bursty (a round of \(pairs.sessions) at once, \(Int(pairs.offeredPerSecond))/s): "
            + "\(pairs.delivered)/\(pairs.messages) delivered, p50 \(duration(pairs.latency?.p50)), "
            + "p99 \(duration(pairs.latency?.p99)), \(Int(pairs.messagesPerSecond)) messages/s")
        if let paced = pairs.paced {
            lines.append("  reliable messages, evenly paced (\(Int(paced.offeredPerSecond))/s, one at a time): "
                + "\(paced.delivered)/\(paced.messages) delivered, p50 \(duration(paced.latency?.p50)), "
                + "p99 \(duration(paced.latency?.p99)) (target ≤ 5 ms); sender late p99 \(duration(paced.senderLateness?.p99))")
        }
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

extension RelayBenchmarkTable {
    /// The adversarial report: the quiet run and each attacked run, one line each, then the attack.
    public static func render(_ report: RelayAdversarialReport) -> String {
        let duration = ClockBenchmarkTable.duration
        let plan = report.plan
        var lines: [String] = []
        lines.append("relay under attack (the relay: its own `tandem serve` process; \(report.participants) honest participants "
            + "in one session, \(report.broadcasts) reliable broadcasts 10 ms apart, in this process; the attackers: a third process, "
            + "`tandem bench relay --attack PORT`; loopback)")
        lines.append("")
        lines.append("  " + [pad("run", 20), pad("delivered", 14, right: true), pad("p50", 10, right: true), pad("p90", 10, right: true),
                             pad("p99", 10, right: true), pad("max", 10, right: true), pad("relay RSS", 11, right: true),
                             pad("growth in run", 14, right: true), pad("VmHWM", 11, right: true), pad("attack sent", 12, right: true), pad("cut", 5, right: true),
                             pad("admitted", 9, right: true)].joined(separator: " "))
        for run in report.runs {
            lines.append("  " + [
                pad(run.name, 20), pad("\(run.delivered)/\(run.expected)", 14, right: true),
                pad(duration(run.latency?.p50), 10, right: true), pad(duration(run.latency?.p90), 10, right: true),
                pad(duration(run.latency?.p99), 10, right: true), pad(duration(run.latency?.max), 10, right: true),
                pad(mebibytes(run.relayResident), 11, right: true), pad(mebibytes(max(run.relayPeakDuring - run.relayResidentBefore, 0)), 14, right: true),
                pad(mebibytes(run.relayPeakSoFar), 11, right: true), pad(run.attack.map { mebibytes($0.bytesSent) } ?? "-", 12, right: true),
                pad(run.attack.map { "\($0.connectionsCut)" } ?? "-", 5, right: true),
                pad("\(run.admissionsTried - run.admissionsRefused)/\(run.admissionsTried)", 9, right: true),
            ].joined(separator: " ") + (run.relayAlive ? "" : "  relay DEAD"))
        }
        lines.append("")
        lines.append("  relay CPU (all its threads, first honest broadcast to last delivery) per honest delivery, and the attackers' CPU:")
        for run in report.runs {
            var line = "    \(pad(run.name, 18)) relay \(run.relayCPUMicrosecondsPerDelivery.map { "\(fixed($0, 2)) µs" } ?? "-") per delivery"
            if let quiet = report.quiet?.relayCPUMicrosecondsPerDelivery, let this = run.relayCPUMicrosecondsPerDelivery, run.plan != nil, quiet > 0 {
                line += " (\(fixed(this / quiet, 2))× quiet)"
            }
            if let attackers = run.attackersCPUSeconds {
                line += "; attackers \(fixed(attackers, 2)) CPU s over the same stretch"
            }
            if let capped = run.attackersCapped { line += "; \(capped)" }
            if let throttled = run.attackersThrottledPeriods { line += ", throttled in \(throttled) periods" }
            lines.append(line)
        }
        if report.runs.contains(where: { $0.relayKernel != nil }) {
            lines.append("")
            lines.append("  the relay's own latency by the kernel's clocks (`serve --measure-kernel --measure-only-from 127.0.0.1`: "
                + "arrival of an honest record to each copy to an honest participant leaving through the device), "
                + "and its loop thread's CPU (serving the attackers too) per honest delivery:")
            for run in report.runs {
                guard let kernel = run.relayKernel else { continue }
                var line = "    \(pad(run.name, 18)) \(kernel.records) records, \(kernel.copies) copies; arrival → sent p50 "
                    + "\(duration(kernel.toDevice?.p50)), p99 \(duration(kernel.toDevice?.p99)), max \(duration(kernel.toDevice?.max))"
                if let cpu = kernel.cpuMicrosecondsPerDelivery { line += "; loop CPU \(fixed(cpu, 2)) µs per delivery" }
                lines.append(line)
            }
            lines.append("    arrival → sent p99 under all attacks ÷ the better quiet run's: "
                + "\(report.kernelLatencyRatio.map { "\(fixed($0, 2))×" } ?? "-") (target 1.5×)")
        }
        lines.append("")
        lines.append("  the attack (\(plan.connections) connections; every dose bounded; `cut`: connections the relay closed):")
        lines.append("    \(plan.neverReading) never-reading: own session each, \(plan.neverReadingRate) proposals/s of "
            + "\(plan.neverReadingBody / 1024) KiB, ack through 2^64-1 every 16, never read, at most \(plan.neverReadingBytes >> 20) MiB each")
        lines.append("    \(plan.partialFrames) unauthenticated: all but the last byte of a 1 MiB frame each, reconnecting when cut")
        lines.append("    \(plan.fanOutMembers) in one session: \(plan.fanOutSenders) offer \(plan.fanOutRate)/s reliable "
            + "\(plan.fanOutBody)-byte messages to everyone (the flood limit), every member reads and acks")
        lines.append("    \(plan.datagramSockets) UDP sockets: \(plan.datagramRate) registrations/s each, with tokens never issued")
        lines.append("    \(plan.idleSockets) idle sockets from four sources (127.0.0.3-6), never a hello, reopened when closed")
        lines.append("    \(plan.memoryHogs) memory hog: a session of its own, 16 MiB attachments up to \(plan.memoryHogBytes >> 20) MiB, then stays")
        lines.append("  admitted: honest creates and joins after the broadcasts, while the attack runs (10 sessions: 20 admissions)")
        if let counts = report.attacked?.attack {
            lines.append("  all attacks sent: \(mebibytes(counts.bytesSent)) in \(counts.framesSent) frames, \(counts.datagramsSent) datagrams; "
                + "\(counts.connectionsOpened) connections opened, \(counts.connectionsCut) cut by the relay, "
                + "\(counts.handshakesFailed) handshakes failed; fan-out members read \(counts.framesReceived) frames")
        }
        lines.append("  relay RSS: at the end of the run; growth: the most sampled during it (every 50 ms) above its start; "
            + "VmHWM: the peak since the relay started")
        lines.append("  relay alive after the attacks: \(report.relayAliveAfterAttack ? "yes" : "NO")")
        if !report.uploads.isEmpty {
            lines.append("  honest uploads, one at a time (relay CPU beside copying the bytes once here):")
            for upload in report.uploads {
                if let refused = upload.refused {
                    lines.append("    \(upload.bytes >> 20) MiB: REFUSED by the relay (\(refused))")
                    continue
                }
                lines.append("    \(upload.bytes >> 20) MiB: relay CPU \(fixed(upload.relayCPUSeconds, 2)) s, done in \(fixed(upload.seconds, 2)) s; "
                    + "one copy \(fixed(upload.copySeconds * 1000, 1)) ms")
            }
        }
        let ratio: String
        if let quiet = report.quiet?.latency?.p99, let attacked = report.attacked?.latency?.p99, quiet > 0 {
            ratio = "\(fixed(attacked / quiet, 2))×"
        } else {
            ratio = "-"
        }
        lines.append("  targets: honest p99 under all attacks within 2× the better quiet run's: \(ratio) "
            + "(\(report.latencyTargetMet.map { $0 ? "met" : "not met" } ?? "-")); "
            + "relay VmHWM within \(mebibytes(report.memoryBudget)): \(report.memoryTargetMet ? "met" : "not met")")
        return lines.joined(separator: "\n") + "\n"
    }

    private static func mebibytes(_ bytes: Int) -> String { "\(fixed(Double(bytes) / 1_048_576, 1)) MiB" }
}
