import Foundation

/// What `tandem bench cluster --players` (and `--failover`) measured: four built-in players on one
/// relay, then the same four split over two relays of a NATS cluster, in the same run.
public struct ClusterPlayersReport: Sendable, Equatable, Codable {
    /// One arrangement of relays: how far apart the four players showed each frame.
    public struct Arrangement: Sendable, Equatable, Codable {
        /// What it was, in words.
        public var name: String
        /// The relays' injected clock errors, in words.
        public var relayClocks: String
        /// Which relay each player was on (`peer-0 A`, …).
        public var placement: [String]
        /// Max − min of the presented instants of each frame all four showed, from the play's
        /// effective instant to the end of the window (ms).
        public var spread: Percentiles?
        /// Max − min of the scheduled instants of the same frames (ms): the players' clock error
        /// alone, apart from how late each presented.
        public var scheduledSpread: Percentiles?
        /// Frames all four showed in the window.
        public var frames: Int
        /// Of those, the frames shown more than 0.5 ms apart (the p99 target): how often, where
        /// a p99 over a few hundred frames says only how bad the third worst was.
        public var framesApart: Int?
        /// CPU over wall time of every process (relays, NATS nodes, players), percent of one core.
        public var usage: [PeerUsage]
        /// What went wrong.
        public var errors: [String]
    }

    /// A relay killed with SIGKILL while its two participants played.
    public struct Failover: Sendable, Equatable, Codable {
        /// From the kill until both of its participants were connected to the other relay (s).
        public var backSeconds: Double?
        /// From the kill until the four presented in step again: the first of ten frames in a
        /// row within 1 ms of each other, at or after they were back (s).
        public var inStepSeconds: Double?
        /// The spread of the frames shown from the kill to the end (ms).
        public var spreadAfter: Percentiles?
        /// Frames all four showed after the kill.
        public var frames: Int
        /// Chat lines (reliable messages) the four sent from just before the kill until shortly
        /// before the end, each meant for the three others.
        public var reliableSent: Int?
        /// Lines a player should have heard from another and never did (target 0).
        public var reliableLost: Int?
        /// Lines a player heard more than once (target 0).
        public var reliableDuplicated: Int?
    }

    /// The players' injected clock errors, in words.
    public var playerClocks: String
    /// How long the players played before the kill (or the end), seconds.
    public var seconds: Double
    /// The four players on one `tandem serve`.
    public var oneRelay: Arrangement
    /// The four players over two `tandem serve --cluster` on a three-node NATS cluster.
    public var twoRelays: Arrangement
    /// The second relay killed, when asked for.
    public var failover: Failover?
    /// The descriptor limit the bench raised itself (and its children) to.
    public var descriptorLimit: UInt64?
    /// Whether the players ran with `--wake-guard`.
    public var wakeGuard = false

    /// The report as a table.
    public var table: String {
        func cell(_ value: Double?, _ format: String = "%.3f") -> String { value.map { String(format: format, $0) } ?? "–" }
        var lines = [
            "Four built-in players, one relay against two relays on a 3-node NATS cluster (R3), one run; "
                + String(format: "%.0f s of play", seconds) + (wakeGuard ? "; players with --wake-guard" : ""),
            "players' clocks: \(playerClocks)",
            "", "| presented spread (ms) | target | \(oneRelay.name) | \(twoRelays.name) |", "|---|---|---|---|",
            "| p50 | ≤ 0.3 | \(cell(oneRelay.spread?.p50)) | \(cell(twoRelays.spread?.p50)) |",
            "| p99 | ≤ 0.5 | \(cell(oneRelay.spread?.p99)) | \(cell(twoRelays.spread?.p99)) |",
            "| max | | \(cell(oneRelay.spread?.max)) | \(cell(twoRelays.spread?.max)) |",
            "| scheduled spread p50 / p99 (clock error alone) | | \(cell(oneRelay.scheduledSpread?.p50)) / \(cell(oneRelay.scheduledSpread?.p99)) | "
                + "\(cell(twoRelays.scheduledSpread?.p50)) / \(cell(twoRelays.scheduledSpread?.p99)) |",
            "| frames all four showed | | \(oneRelay.frames) | \(twoRelays.frames) |",
            "| of those, shown more than 0.5 ms apart | | \(oneRelay.framesApart.map(String.init) ?? "–") | "
                + "\(twoRelays.framesApart.map(String.init) ?? "–") |",
            "| relays' clocks | | \(oneRelay.relayClocks) | \(twoRelays.relayClocks) |",
            "| placement | | \(oneRelay.placement.joined(separator: ", ")) | \(twoRelays.placement.joined(separator: ", ")) |",
        ]
        if let failover {
            lines += ["", "| relay B killed (SIGKILL) while its two participants played | target | measured |", "|---|---|---|",
                      "| both back, connected to relay A (s) | | \(cell(failover.backSeconds)) |",
                      "| presenting in step again, 10 frames within 1 ms (s) | ≤ 3 | \(cell(failover.inStepSeconds)) |",
                      "| spread after the kill, p50 / p99 / max (ms) | | \(cell(failover.spreadAfter?.p50)) / "
                        + "\(cell(failover.spreadAfter?.p99)) / \(cell(failover.spreadAfter?.max)) |",
                      "| frames all four showed after the kill | | \(failover.frames) |",
                      "| reliable messages sent across the kill / lost / duplicated | 0 lost, 0 duplicated | "
                        + "\(failover.reliableSent.map(String.init) ?? "–") / \(failover.reliableLost.map(String.init) ?? "–") / "
                        + "\(failover.reliableDuplicated.map(String.init) ?? "–") |"]
        }
        lines += ["", "| CPU (% of a core) | \(oneRelay.name) | \(twoRelays.name) |", "|---|---|---|"]
        let names = (oneRelay.usage.map(\.peer) + twoRelays.usage.map(\.peer)).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        for name in names {
            let one = oneRelay.usage.first { $0.peer == name }?.cpuPercent
            let two = twoRelays.usage.first { $0.peer == name }?.cpuPercent
            lines.append("| \(name) | \(cell(one, "%.1f")) | \(cell(two, "%.1f")) |")
        }
        for error in oneRelay.errors + twoRelays.errors { lines.append("error: \(error)") }
        if let descriptorLimit { lines.append("descriptor limit: \(descriptorLimit)") }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// What `tandem bench cluster` measured, row by row (each nil when not asked for).
public struct ClusterBenchReport: Sendable, Equatable, Codable {
    /// The machine, in one line.
    public var machine: String
    /// The load average (1, 5, 15 minutes) when the bench began.
    public var loadAverage: [Double]
    /// Four players over two relays, beside one relay, and a relay killed.
    public var players: ClusterPlayersReport?
    /// Ordered delivery for many sessions, one relay beside three.
    public var ordered: ClusterOrderedReport?
    /// The cluster's time (`--clock`).
    public var clock: ClusterClockReport?

    /// The rows measured, on `machine` at `loadAverage`.
    public init(machine: String, loadAverage: [Double], players: ClusterPlayersReport? = nil, ordered: ClusterOrderedReport? = nil,
                clock: ClusterClockReport? = nil) {
        self.machine = machine
        self.loadAverage = loadAverage
        self.players = players
        self.ordered = ordered
        self.clock = clock
    }

    /// The report as JSON.
    public func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(self)
    }

    /// Every row's table, with the machine and its load first.
    public var table: String {
        let load = loadAverage.map { String(format: "%.2f", $0) }.joined(separator: " ")
        return (["\(machine); load average \(load)\n"] + [players?.table, ordered?.table, clock?.table].compactMap { $0 }).joined(separator: "\n")
    }

    /// The 1, 5 and 15 minute load averages from `/proc/loadavg`.
    public static func loadAverage() -> [Double] {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        return text.split(separator: " ").prefix(3).compactMap { Double($0) }
    }

    /// This machine in one line (as `tandem bench all` names it).
    public static var machine: String { BenchmarkSuite.machine() }
}
