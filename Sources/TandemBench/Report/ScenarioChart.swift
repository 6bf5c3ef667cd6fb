/// The three charts of each scenario: what each shows, its file's name and how it is drawn.
public enum ScenarioChart: String, Sendable, CaseIterable {
    /// The spread over time, the baseline's and tandem's on one logarithmic axis.
    case spread
    /// Each peer's clock error over time in tandem's run (the baseline has no clock).
    case clock
    /// The spread's distribution: the share of frames at or below each spread, for both modes.
    case distribution

    /// The colours of peers' lines, in turn.
    public static let peerPalette = ["#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]

    /// The colour of `mode`'s lines: red for the baseline, blue for tandem.
    public static func colour(_ mode: SyncMode) -> String {
        switch mode {
        case .onReceipt: "#d62728"
        case .coordinator: "#1f77b4"
        }
    }

    /// The chart's file for the scenario whose file stem is `stem` (`steady-spread.svg`).
    public func fileName(stem: String) -> String {
        "\(stem)-\(rawValue).svg"
    }

    /// What the chart shows, in a few words (for alternative text).
    public var subject: String {
        switch self {
        case .spread: "inter-peer spread over time"
        case .clock: "clock error per peer over time"
        case .distribution: "distribution of the inter-peer spread"
        }
    }

    /// The chart of `scenario`.
    public func chart(of scenario: ScenarioResult) -> SVGChart {
        let title = "\(scenario.name): \(subject)"
        switch self {
        case .spread:
            let series = SyncMode.allCases.compactMap { mode in
                scenario.run(mode).map { run in
                    ChartSeries(name: legend(mode, run), colour: ScenarioChart.colour(mode),
                                points: run.spreadSeries.map { ChartPoint(x: $0.t, y: $0.value) })
                }
            }
            return SVGChart(title: title, x: ChartAxis(title: "time from the start of the script (s)"),
                            y: ChartAxis(title: "spread (ms, log scale)", scale: .logarithmic), series: series)
        case .clock:
            let peers = scenario.run(.coordinator)?.clockErrorSeries ?? []
            let series = peers.enumerated().map { index, peer in
                ChartSeries(name: peer.peer, colour: ScenarioChart.peerPalette[index % ScenarioChart.peerPalette.count],
                            points: peer.points.map { ChartPoint(x: $0.t, y: $0.value) })
            }
            return SVGChart(title: "\(title) (\(SyncMode.coordinator.title))", x: ChartAxis(title: "time from the start of the script (s)"),
                            y: ChartAxis(title: "clock error (ms, + is late)"), series: series,
                            caption: "Only \(SyncMode.coordinator.title)'s run: the baseline (\(SyncMode.onReceipt.title)) "
                                + "has no clock, so no clock error to show.")
        case .distribution:
            let series = SyncMode.allCases.compactMap { mode in
                scenario.run(mode).map { run in
                    ChartSeries.distribution(name: legend(mode, run), colour: ScenarioChart.colour(mode), values: run.spreadSeries.map(\.value))
                }
            }
            return SVGChart(title: title, x: ChartAxis(title: "spread (ms, log scale)", scale: .logarithmic),
                            y: ChartAxis(title: "frames at or below (%)", range: 0...100), series: series)
        }
    }

    /// The mode's name and its p99 spread, as the legend lists it.
    private func legend(_ mode: SyncMode, _ run: ModeResult) -> String {
        guard let p99 = run.spread?.p99 else { return mode.title }
        return "\(mode.title) (p99 \(SuiteTable.number(p99)) ms)"
    }
}
