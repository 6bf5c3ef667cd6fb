import Foundation

/// Renders a sync benchmark report as plain text: the spreads, the script, the late joiner and
/// the design's targets, each marked met or missed.
public enum SyncBenchmarkTable {
    /// The whole report.
    public static func render(_ report: SyncBenchmarkReport) -> String {
        var lines: [String] = []
        lines.append("sync: \(report.peers) peers as separate processes on loopback, \(URL(fileURLWithPath: report.clip).lastPathComponent), "
            + String(format: "%.1f s", report.seconds))
        lines.append("")
        lines.append("| peer | clock offset s | drift ppm | presented | dropped | exit | timeline agrees |")
        lines.append("|---|---:|---:|---:|---:|---:|---|")
        let late = report.lateJoiner.map { [$0.peer] } ?? []
        for peer in report.peerRuns + late {
            lines.append("| \(peer.name) | \(String(format: "%+.2f", peer.clockOffsetSeconds)) | \(String(format: "%+.0f", peer.clockDriftPPM)) | "
                + "\(peer.presented.map(String.init) ?? "-") | \(peer.dropped.map(String.init) ?? "-") | "
                + "\(peer.exitStatus.map(String.init) ?? "killed") | \(peer.agreesOnTimeline ? "yes" : "NO") |")
        }
        lines.append("")
        lines.append("inter-peer spread over \(report.pairedFrames) frames every peer showed (\(report.unpairedFrames) showings not shown by all):")
        lines.append("| instant | p50 ms | p90 ms | p99 ms | max ms |")
        lines.append("|---|---:|---:|---:|---:|")
        lines.append(row("presented", report.presentedSpread))
        lines.append(row("scheduled (clock error)", report.scheduledSpread))
        lines.append("")
        lines.append("| command | version | to effective instant ms | to last peer's first frame ms |")
        lines.append("|---|---:|---:|---:|")
        for command in report.commands {
            lines.append("| \(command.command) | \(command.version.map(String.init) ?? "-") | \(number(command.toEffect)) | \(number(command.toFirstFrame)) |")
        }
        if let effect = report.commandToEffect {
            lines.append("command to effect: p50 \(number(effect.p50)) ms, p90 \(number(effect.p90)) ms, p99 \(number(effect.p99)) ms")
        }
        lines.append("")
        if let late = report.lateJoiner {
            lines.append("late joiner \(late.peer.name): joined after \(number(late.toJoined)) ms, first frame after \(number(late.toFirstFrame)) ms, "
                + "on time (10 frames in a row within 1 ms of the others) after \(number(late.toOnTime)) ms")
            if let error = late.errorAfterOnTime {
                lines.append("  its error from then on, over \(error.count) of \(late.framesCompared) frames compared: p50 \(number(error.p50, 3)) ms, "
                    + "p99 \(number(error.p99, 3)) ms, min \(number(error.min, 3)) ms, max \(number(error.max, 3)) ms")
            }
        } else {
            lines.append("late joiner: did not join")
        }
        for error in report.errors {
            lines.append("error from \(error)")
        }
        lines.append("")
        lines.append("targets (the design's, four peers):")
        for target in report.targets {
            lines.append("  \(target.name) \(number(target.measured, 3)) ms ≤ \(number(target.bound, 1)) ms: \(target.met ? "met" : "MISSED")")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func row(_ name: String, _ values: Percentiles?) -> String {
        guard let values else { return "| \(name) | - | - | - | - |" }
        return "| \(name) | " + [values.p50, values.p90, values.p99, values.max].map { number($0, 3) }.joined(separator: " | ") + " |"
    }

    private static func number(_ value: Double?, _ decimals: Int = 1) -> String {
        guard let value, value.isFinite else { return "-" }
        return String(format: "%.\(decimals)f", value)
    }
}
