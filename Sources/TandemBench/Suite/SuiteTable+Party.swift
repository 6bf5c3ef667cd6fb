extension SuiteTable {
    /// One line per scenario and mode with the party figures (`host-leaves`, `streamed`) and the
    /// frame-flip probe's (`mpv`), in the order of the report.
    public static func partyLines(_ report: SuiteReport) -> [String] {
        report.scenarios.flatMap { scenario in
            [SyncMode.onReceipt, .coordinator].compactMap { scenario.run($0) }.flatMap { run in
                [hostLeaveLine(scenario, run), streamedLine(scenario, run), frameFlipLine(scenario, run)].compactMap { $0 }
            }
        }
    }

    /// `host-leaves, tandem: the host left at 4.0 s; the 3 others' spread after it p50 0.080, p99
    /// 0.300, max 0.500 ms (450 frames); 0 dropped, 0 skipped; 2 changes after it`; nil without a
    /// leaving host.
    public static func hostLeaveLine(_ scenario: ScenarioResult, _ run: ModeResult) -> String? {
        guard let figures = run.hostLeave else { return nil }
        var line = "\(scenario.name), \(run.mode.title): the host left at \(number(figures.leftAt)) s; "
        if let spread = figures.spread {
            line += "the others' spread after it p50 \(number(spread.p50)), p99 \(number(spread.p99)), max \(number(spread.max)) ms "
                + "(\(spread.count) frames)"
        } else {
            line += "the others showed no frame together after it"
        }
        line += "; \(figures.framesDropped) dropped, \(figures.framesSkipped) skipped of \(figures.framesAfter) frames after it; "
            + "\(figures.changesAfter) change\(figures.changesAfter == 1 ? "" : "s") after it"
        return line
    }

    /// `streamed, tandem: 2 joiners streaming; joined → first frame p50 310, max 420 ms; seek →
    /// first frame at the new position p50 150, max 240 ms (0 missed); spread with the host p99
    /// 0.300 ms`; nil without streaming joiners.
    public static func streamedLine(_ scenario: ScenarioResult, _ run: ModeResult) -> String? {
        guard let figures = run.streamed else { return nil }
        func pair(_ values: Percentiles?) -> String {
            values.map { "p50 \(number($0.p50)), max \(number($0.max)) ms" } ?? missing
        }
        return "\(scenario.name), \(run.mode.title): \(figures.joiners) joiner\(figures.joiners == 1 ? "" : "s") streaming; "
            + "joined → first frame \(pair(figures.joinedToFirstFrame)); "
            + "seek → first frame at the new position \(pair(figures.seekToFirstFrame)) (\(figures.seeksMissed) missed); "
            + "spread with the host p50 \(number(figures.spread?.p50)), p99 \(number(figures.spread?.p99)) ms"
    }

    /// `mpv, tandem: frames shown (frame-flip probe) p50 0.400, p95 1.800, p99 2.900, max 13.0 ms
    /// (540 frames); the floor, 3 bare mpv in the same sitting: p50 1.700, p95 2.100, p99 2.200
    /// ms`; nil without the probe.
    public static func frameFlipLine(_ scenario: ScenarioResult, _ run: ModeResult) -> String? {
        guard let figures = run.frameFlips else { return nil }
        func four(_ values: Percentiles?) -> String {
            values.map { "p50 \(number($0.p50)), p95 \(number($0.p95)), p99 \(number($0.p99)), max \(number($0.max)) ms (\($0.count) frames)" }
                ?? missing
        }
        return "\(scenario.name), \(run.mode.title): frames shown (frame-flip probe) \(four(figures.spread)); "
            + "the floor, \(scenario.peers) bare mpv in the same sitting: \(four(figures.floor))"
    }
}
