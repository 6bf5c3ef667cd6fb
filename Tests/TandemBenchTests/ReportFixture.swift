import TandemBench

/// A hand-built suite report of two scenarios with known numbers: `steady`, complete, and one
/// with an awkward name whose baseline measured nothing and failed.
enum ReportFixture {
    /// The awkward scenario's name: a slash, a non-ASCII letter, spaces and markup.
    static let oddName = "late join/ü & <x>"
    /// The awkward scenario's summary, with characters that must be escaped.
    static let oddSummary = "Spikes <&> and \"quotes\" while a peer joins late."

    /// The whole report.
    static let report = SuiteReport(
        date: "2025-06-01T12:00:00Z", machine: "Linux 6.1, 2 cores, 4 GiB", quick: true, seconds: 93.5,
        scenarios: [steady, odd])

    /// Percentiles with the given median and tail; the rest made up around them.
    static func percentiles(p50: Double, p95: Double, p99: Double, max: Double) -> Percentiles {
        var values = Percentiles([p50])!
        values.count = 100
        values.min = p50 / 2
        values.p50 = p50
        values.p90 = p95
        values.p95 = p95
        values.p99 = p99
        values.max = max
        return values
    }

    /// `count` points a tenth of a second apart, with values from `value`.
    static func series(_ count: Int, _ value: (Int) -> Double) -> [SeriesPoint] {
        (0..<count).map { SeriesPoint(t: Double($0) / 10, value: value($0)) }
    }

    static let steady = ScenarioResult(
        name: "steady", summary: "Three peers play for a minute with nothing happening.", peers: 3, player: "builtin",
        network: "loopback",
        runs: [
            ModeResult(
                mode: .onReceipt, spread: percentiles(p50: 12.5, p95: 25, p99: 31.4, max: 40), clockError: nil,
                commandToEffect: percentiles(p50: 45.6, p95: 60, p99: 70, max: 80),
                convergence: percentiles(p50: 120.4, p95: 130, p99: 140, max: 150), convergenceEvents: 3, notConverged: 1,
                framesPresented: 1200, framesDropped: 5,
                peers: [PeerUsage(peer: "p1", cpuPercent: 12, peakMemoryMiB: 40.2), PeerUsage(peer: "p2", cpuPercent: 14, peakMemoryMiB: 45.7),
                        PeerUsage(peer: "p3", cpuPercent: nil, peakMemoryMiB: nil)],
                spreadSeries: series(300) { 5 + Double($0 % 30) }, clockErrorSeries: [], errors: []),
            ModeResult(
                mode: .coordinator, spread: percentiles(p50: 0.109, p95: 0.12, p99: 0.148, max: 0.2),
                clockError: percentiles(p50: 0.05, p95: 0.2, p99: 0.25, max: 0.3),
                commandToEffect: percentiles(p50: 250, p95: 260, p99: 270, max: 280),
                convergence: percentiles(p50: 1.234, p95: 2, p99: 3, max: 4), convergenceEvents: 3, notConverged: 0,
                framesPresented: 1210, framesDropped: 0,
                peers: [PeerUsage(peer: "p1", cpuPercent: 3.5, peakMemoryMiB: 30), PeerUsage(peer: "p2", cpuPercent: 4.5, peakMemoryMiB: 31.3)],
                spreadSeries: series(300) { 0.1 + Double($0 % 5) / 100 },
                clockErrorSeries: ["p1", "p2", "p3"].enumerated().map { index, peer in
                    PeerSeries(peer: peer, points: series(300) { (Double(($0 + index) % 9) - 4) / 40 })
                },
                errors: []),
        ])

    static let odd = ScenarioResult(
        name: oddName, summary: oddSummary, peers: 2, player: "mpv", network: "50 ± 20 ms, 2 % loss",
        runs: [
            ModeResult(
                mode: .onReceipt, spread: nil, clockError: nil, commandToEffect: nil, convergence: nil, convergenceEvents: 0,
                notConverged: 0, framesPresented: 800, framesDropped: 40,
                peers: [PeerUsage(peer: "a", cpuPercent: nil, peakMemoryMiB: nil)], spreadSeries: [], clockErrorSeries: [],
                errors: ["peer p2 exited with status 1"]),
            ModeResult(
                mode: .coordinator, spread: percentiles(p50: 0.5, p95: 0.9, p99: 1.0, max: 1.5),
                clockError: percentiles(p50: 0.1, p95: 0.3, p99: 0.4, max: 0.5), commandToEffect: nil,
                convergence: nil, convergenceEvents: 2, notConverged: 2, framesPresented: 790, framesDropped: 1,
                peers: [PeerUsage(peer: "a", cpuPercent: 150.25, peakMemoryMiB: 512)],
                spreadSeries: series(50) { $0 == 0 ? 0 : 0.5 + Double($0) / 100 },
                clockErrorSeries: [PeerSeries(peer: "a", points: [])],
                errors: []),
        ])
}
