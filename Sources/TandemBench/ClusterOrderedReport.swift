import Foundation

/// What `tandem bench cluster --sessions N` measured: ordered delivery for N sessions of four on
/// one relay, then spread over three relays of a NATS cluster, in the same run.
public struct ClusterOrderedReport: Sendable, Equatable, Codable {
    /// One offered rate.
    public struct Step: Sendable, Equatable, Codable {
        /// Proposals offered per second, all sessions together, evenly.
        public var offeredPerSecond: Int
        /// Proposals made.
        public var proposals: Int
        /// Receipts expected (three readers per proposal).
        public var expected: Int
        /// Receipts recorded within the drain's deadline.
        public var delivered: Int
        /// From proposal to receipt (ms).
        public var latency: Percentiles?
        /// How late the pacer sent, p99 (ms): when large, the offer was not the rate stated.
        public var senderLatenessP99: Double?

        /// Whether every receipt arrived with a p99 within `p99Bound` ms.
        public func holds(p99Bound: Double) -> Bool {
            guard delivered >= expected, let latency else { return false }
            return latency.p99 <= p99Bound
        }
    }

    /// One arrangement of relays.
    public struct Arrangement: Sendable, Equatable, Codable {
        /// What it was, in words.
        public var name: String
        /// Relays.
        public var relays: Int
        /// How long every participant took to join, seconds.
        public var joinSeconds: Double
        /// The rates tried, in order; the last is the first that did not hold (or the last of the list).
        public var steps: [Step]
        /// Messages the session logs took over the steps per proposal offered (the proposals'
        /// batches and everything else the relays appended meanwhile: cursors, snapshots).
        public var logMessagesPerProposal: Double? = nil
        /// CPU over wall time of every process, percent of one core.
        public var usage: [PeerUsage]

        /// The highest offered rate that held (proposals per second), if any.
        public func sustained(p99Bound: Double) -> Int? {
            steps.filter { $0.holds(p99Bound: p99Bound) }.map(\.offeredPerSecond).max()
        }
    }

    /// Sessions.
    public var sessions: Int
    /// Participants in each.
    public var participants: Int
    /// How long each rate was offered, seconds.
    public var stepSeconds: Double
    /// The p99 under which a rate holds (ms).
    public var p99Bound: Double
    /// On one `tandem serve`.
    public var oneRelay: Arrangement
    /// Over three `tandem serve --cluster` on a three-node NATS cluster (R3).
    public var threeRelays: Arrangement
    /// The same NATS cluster alone in the relays' shape, before the relays started.
    public var natsAlone: ClusterCASBenchmark.Result?

    /// A report of these figures.
    public init(sessions: Int, participants: Int, stepSeconds: Double, p99Bound: Double, oneRelay: Arrangement, threeRelays: Arrangement,
                natsAlone: ClusterCASBenchmark.Result? = nil) {
        self.sessions = sessions
        self.participants = participants
        self.stepSeconds = stepSeconds
        self.p99Bound = p99Bound
        self.oneRelay = oneRelay
        self.threeRelays = threeRelays
        self.natsAlone = natsAlone
    }

    /// The report as a table.
    public var table: String {
        func cell(_ value: Double?, _ format: String = "%.2f") -> String { value.map { String(format: format, $0) } ?? "–" }
        var lines = [
            "Ordered delivery, \(sessions) sessions of \(participants) (each session's participants over every relay), "
                + "proposal to receipt by the other \(participants - 1); " + String(format: "each rate offered evenly for %.0f s", stepSeconds),
            "", "| offered /s | \(oneRelay.name) p50 / p99 (ms) | delivered | \(threeRelays.name) p50 / p99 (ms) | delivered "
                + "| NATS alone, commit p50 / p99 (ms) | committed |",
            "|---|---|---|---|---|---|---|",
        ]
        func natsCells(_ rate: Int) -> String {
            guard let step = natsAlone?.paced?.first(where: { $0.offeredPerSecond == rate }) else { return "not tried | " }
            return "\(cell(step.latency?.p50)) / \(cell(step.latency?.p99)) | \(step.commits)/\(step.offered)"
                + (step.skipped > 0 ? " (\(step.skipped) behind)" : "") + (step.holds(p99Bound: p99Bound) ? "" : " ✗")
        }
        let rates = (oneRelay.steps + threeRelays.steps).map(\.offeredPerSecond).reduce(into: [Int]()) { if !$0.contains($1) { $0.append($1) } }
            + (natsAlone?.paced ?? []).map(\.offeredPerSecond).filter { rate in !(oneRelay.steps + threeRelays.steps).contains { $0.offeredPerSecond == rate } }
        for rate in rates {
            func cells(_ arrangement: Arrangement) -> String {
                guard let step = arrangement.steps.first(where: { $0.offeredPerSecond == rate }) else { return "not tried | " }
                return "\(cell(step.latency?.p50)) / \(cell(step.latency?.p99)) | \(step.delivered)/\(step.expected)"
                    + (step.holds(p99Bound: p99Bound) ? "" : " ✗")
            }
            lines.append("| \(rate) | \(cells(oneRelay)) | \(cells(threeRelays)) | \(natsCells(rate)) |")
        }
        func sustained(_ arrangement: Arrangement) -> String { arrangement.sustained(p99Bound: p99Bound).map { "\($0) /s" } ?? "none" }
        let natsSustained = natsAlone.map { alone in alone.sustained(p99Bound: p99Bound).map { "\($0) /s" } ?? "none" } ?? "–"
        lines += [
            String(format: "| sustained (all delivered, p99 ≤ %.0f ms) | ", p99Bound) + "\(sustained(oneRelay)) | | \(sustained(threeRelays)) | "
                + "| \(natsSustained) | |",
            String(format: "| joining all %d participants (s) | %.1f | | %.1f | | | |", sessions * participants, oneRelay.joinSeconds,
                   threeRelays.joinSeconds),
            "| log messages per proposal over the steps | | | \(cell(threeRelays.logMessagesPerProposal)) | | | |",
        ]
        if let alone = natsAlone {
            lines += [
                "", "NATS alone, the same cluster before the relays started: \(alone.chains) compare-and-set chains from one client "
                    + "over \(alone.streams) streams (one publish in flight per chain, as a relay publishes a session's log); "
                    + "above, the same chains offered each rate evenly; here, every chain publishing at once",
                "", "| commits /s | p50 / p99 publish → acknowledgement (ms) | failed | three relays' sustained rate / this |", "|---|---|---|---|",
                String(format: "| %.0f | ", alone.perSecond) + "\(cell(alone.latency?.p50)) / \(cell(alone.latency?.p99)) | \(alone.failures) | "
                    + (threeRelays.sustained(p99Bound: p99Bound).map { String(format: "%.1f %%", Double($0) / max(alone.perSecond, 1) * 100) } ?? "none")
                    + " |",
            ]
        }
        lines += [
            "", "| CPU (% of a core) | \(oneRelay.name) | \(threeRelays.name) |", "|---|---|---|",
        ]
        let names = (oneRelay.usage.map(\.peer) + threeRelays.usage.map(\.peer)).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        for name in names {
            lines.append("| \(name) | \(cell(oneRelay.usage.first { $0.peer == name }?.cpuPercent, "%.1f")) | "
                + "\(cell(threeRelays.usage.first { $0.peer == name }?.cpuPercent, "%.1f")) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
