import Foundation
import TandemHarness

/// Renders an audio bench report as plain text: a row per group, then the participants, the
/// changes, and the issue's targets for the built-in players.
public enum AudioBenchmarkTable {
    /// The whole report.
    public static func render(_ report: AudioBenchmarkReport) -> String {
        var lines: [String] = []
        lines.append("audio: \(report.participants.count) participants as separate processes into one PulseAudio null sink (a channel each), "
            + String(format: "script %.1f s, all in %.1f s; the relay's session clock drifts %+.0f ppm", report.scriptSeconds, report.seconds, report.relayDriftPPM))
        lines.append("")
        lines.append("audio spread, latest minus earliest participant of a group, in µs (rate-1 windows of 30 ms every 100 ms; clicks at every rate):")
        lines.append("| group | participants | windows (skipped) | steady p50 | p95 | p99 | max | after a change p50 | p99 | max | clicks p50 | p99 | max (outside changes) |")
        lines.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for group in report.groups {
            if let reason = group.notMeasured {
                lines.append("| \(group.name) | \(group.participants.joined(separator: ", ")) | not measured: \(reason) | | | | | | | | | | |")
                continue
            }
            lines.append("| \(group.name) | \(group.participants.joined(separator: ", ")) | \(group.windows) (\(group.skippedWindows)) | "
                + "\(n(group.steady?.p50)) | \(n(group.steady?.p95)) | \(n(group.steady?.p99)) | \(n(group.steady?.max)) | "
                + "\(n(group.afterChanges?.p50)) | \(n(group.afterChanges?.p99)) | \(n(group.afterChanges?.max)) | "
                + "\(n(group.clicks?.p50)) | \(n(group.clicks?.p99)) | \(n(group.clicksSteady?.max)) |")
        }
        let split = report.groups.filter { $0.clocksSteady != nil }
        if !split.isEmpty {
            lines.append("")
            lines.append("the steady spread taken apart, µs: the clocks' own (latest minus earliest instant the members' logs intended for the same media) "
                + "and what the outputs added (each member's lag less its intention's):")
            lines.append("| group | windows | clocks p50 | p99 | max | outputs p50 | p99 | max |")
            lines.append("|---|---:|---:|---:|---:|---:|---:|---:|")
            for group in split {
                lines.append("| \(group.name) | \(group.clocksSteady!.count) | \(n(group.clocksSteady?.p50)) | \(n(group.clocksSteady?.p99)) | "
                    + "\(n(group.clocksSteady?.max)) | \(n(group.outputsSteady?.p50)) | \(n(group.outputsSteady?.p99)) | \(n(group.outputsSteady?.max)) |")
            }
        }
        lines.append("")
        lines.append("| participant | group | clock offset s | drift ppm | exit | writes | correction ppm min/p50/max | snaps | underruns (before the script) | latency ms p50 | own error µs p50 / p99 / max (windows, correlation with the media) | vs expected µs p50 / p99 | pictures after sound µs p50 / p99 / max |")
        lines.append("|---|---|---:|---:|---:|---:|---|---:|---:|---:|---|---|---|")
        for participant in report.participants {
            let correction = participant.correctionPPM.map { String(format: "%+.0f / %+.0f / %+.0f", $0.min, $0.p50, $0.max) } ?? "-"
            let own = participant.ownErrorMicroseconds.map { "\(n($0.p50)) / \(n($0.p99)) / \(n($0.max)) (\($0.count)\(participant.ownErrorUnattributed.map { $0 > 0 ? " + \($0) unpaired" : "" } ?? ""), peak \(String(format: "%.2f", participant.ownErrorPeak?.p50 ?? 0)))" } ?? "-"
            let expected = participant.errorAgainstExpectedMicroseconds.map { "\(n($0.p50)) / \(n($0.p99))" } ?? "-"
            let pictures = participant.picturesAfterSoundMicroseconds.map { "\(n($0.p50)) / \(n($0.p99)) / \(n($0.max)) (\($0.count)\(participant.picturesUnpaired.map { $0 > 0 ? " + \($0) unpaired" : "" } ?? ""))" } ?? "-"
            lines.append("| \(participant.name) | \(participant.group) | \(String(format: "%+.2f", participant.clockOffsetSeconds)) | "
                + "\(String(format: "%+.0f", participant.clockDriftPPM)) | \(participant.exitStatus.map(String.init) ?? "killed") | "
                + "\(participant.writes.map(String.init) ?? "-") | \(correction) | \(participant.snaps.map(String.init) ?? "-") | "
                + "\(participant.underruns.map(String.init) ?? "-")\(participant.underrunsBeforeScript.map { " (\($0))" } ?? "") | \(participant.latencyMilliseconds.map { String(format: "%.2f", $0.p50) } ?? "-") | \(own) | \(expected) | \(pictures) |")
        }
        if let common = report.commonOffsetMicroseconds {
            lines.append("own errors are given about their common offset between one change and the next (the median of the built-in players'; "
                + "over the run \(n(common)) µs, moving by \(n(report.commonOffsetRangeMicroseconds)) µs from one stretch to another): "
                + "the recording is placed on the machine's clock by the sound server's timing of it, up to a constant of the stretch "
                + "(the resamplers' delays, and the sink's rewind at a change), which is no one output's")
        }
        let missing = report.participants.filter { ($0.missingFrames ?? 0) > 0 }
        if !missing.isEmpty {
            lines.append("media wanted before it was decoded (played as silence): "
                + missing.map { "\($0.name) \($0.missingFrames!) frames" }.joined(separator: ", "))
        }
        if let realtime = report.soundServerRealtime {
            lines.append(realtime ? "the sound server's main thread, which moves every participant's sound, ran at SCHED_RR \(SoundServerPriority.mainThreadPriority)"
                : "the sound server's main thread ran at its own scheduling (this process may not give it a real-time priority): "
                + "under load it can run every participant dry at once")
        }
        let priorities = report.participants.filter { $0.outputRealtime != nil }
        if !priorities.isEmpty {
            let without = priorities.filter { $0.outputRealtime == false }.map(\.name)
            lines.append(without.isEmpty ? "every built-in output's thread ran at SCHED_FIFO 4"
                : "without a real-time priority (not permitted), at an ordinary one: " + without.joined(separator: ", "))
        }
        if let host = report.host {
            lines.append("the machine during the script: load \(String(format: "%.1f–%.1f", host.loadMinimum, host.loadMaximum)) (one-minute), "
                + "the host's steal time \(n(host.stealMilliseconds)) ms of processor time, at most \(n(host.largestStealMilliseconds)) ms in 0.1 s")
            for moment in host.underrunMoments {
                let at = Double(moment.at - (report.scriptStartedNanoseconds ?? moment.at)) / 1e9
                lines.append("  underrun at \(String(format: "%.2f", at)) s of the script: " + moment.outputs.joined(separator: ", ")
                    + (moment.everyOutput ? " (every output, within \(String(format: "%.2f", Double(moment.spread) / 1e6)) ms: the machine or the sound server)" : "")
                    + ", steal \(moment.stealMilliseconds.map { n($0) } ?? "-") ms in the 0.25 s before, load \(moment.load.map { String(format: "%.1f", $0) } ?? "-")")
            }
        }
        if let ppm = report.recordingClockPPM {
            lines.append("the recording is placed at the \(AudioBenchmark.sinkRate / 1_000) kHz sink's exact rate (its timer's, the machine's clock); "
                + "the sound server's timing reports alone gave \(String(format: "%+.1f", ppm)) ppm")
        }
        lines.append("")
        let names = report.groups.filter { $0.notMeasured == nil }.map(\.name)
        if !report.changes.isEmpty, !names.isEmpty {
            lines.append("largest spread in the 100 ms after each change, µs:")
            lines.append("| change | at s | rate | " + names.joined(separator: " | ") + " |")
            lines.append("|---|---:|---:|" + names.map { _ in "---:|" }.joined())
            for change in report.changes {
                lines.append("| \(change.change) | \(String(format: "%.2f", change.atSeconds)) | \(String(format: "%g", change.rate)) | "
                    + names.map { n(change.largestSpread[$0]) }.joined(separator: " | ") + " |")
            }
            lines.append("")
        }
        if let tandem = report.groups.first(where: { $0.name == AudioBenchmark.Kind.tandem.rawValue }), tandem.notMeasured == nil {
            lines.append("targets (built-in players):")
            let bound = AudioSpreadAnalysis.spreadBound(clocksP99: tandem.clocksSteady?.p99)
            lines.append(target(bound > 50 ? "audio spread p99 ≤ \(n(bound)) µs (the clocks' own p99 \(n(tandem.clocksSteady?.p99)) µs, and 20 µs)"
                                    : "audio spread p99 ≤ 50 µs (the clocks' own p99 \(n(tandem.clocksSteady?.p99)) µs)",
                                tandem.steady.map { $0.p99 <= bound }))
            lines.append(target("maximum ≤ 200 µs outside the 100 ms after a change", tandem.steady.map { $0.max <= 200 }))
            let own = report.participants.filter { $0.group == tandem.name }.compactMap(\.ownErrorMicroseconds)
            lines.append(target("each output's own error p99 ≤ 20 µs", own.isEmpty ? nil : own.allSatisfy { max(abs($0.p99), abs($0.min)) <= 20 }))
            let corrections = report.participants.filter { $0.group == tandem.name }.compactMap(\.correctionPPM)
            lines.append(target("rate corrections within ±0.5 %", corrections.isEmpty ? nil : corrections.allSatisfy { max(abs($0.min), abs($0.max)) <= 5_000 }))
            let underruns = report.participants.filter { $0.group == tandem.name }.compactMap(\.underruns)
            lines.append(target("no underrun", underruns.isEmpty ? nil : underruns.allSatisfy { $0 == 0 }))
            let pictures = report.participants.filter { $0.group == tandem.name }.compactMap(\.picturesAfterSoundMicroseconds)
            lines.append(target("pictures and sound of one participant within ±2 ms (by its logs)",
                                pictures.isEmpty ? nil : pictures.allSatisfy { max(abs($0.p99), abs($0.min)) <= 2_000 }))
        }
        if let mpv = report.groups.first(where: { $0.name == AudioBenchmark.Kind.mpv.rawValue }), mpv.notMeasured == nil {
            lines.append(target("mpv participants' audio spread p99 ≤ 5 ms", mpv.all.map { $0.p99 <= 5_000 }))
        }
        for error in report.errors { lines.append("error: \(error)") }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func target(_ text: String, _ met: Bool?) -> String {
        "  \(text): " + (met.map { $0 ? "met" : "MISSED" } ?? "not measured")
    }

    private static func n(_ value: Double?) -> String {
        guard let value else { return "-" }
        return abs(value) >= 100 ? String(format: "%.0f", value) : String(format: "%.1f", value)
    }
}
