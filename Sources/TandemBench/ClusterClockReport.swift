import Foundation
import TandemCluster

/// One phase of `ClusterClockBenchmark`: every error in µs, read every 10 ms.
public struct ClusterClockPhase: Sendable, Hashable, Codable {
    /// How long it was read, in seconds.
    public var seconds: Double
    /// Each relay's cluster time against the authority's (µs).
    public var relayAgreement: Percentiles?
    /// Each relay's latest estimate of the authority's time, before slewing, against it (µs).
    public var relayEstimate: Percentiles?
    /// Each relay's own bound on its error (`ClusterSessionClock.errorBound`, µs), which excludes
    /// path asymmetry.
    public var relayErrorBound: Percentiles?
    /// Each participant's session time against its own relay's: a single relay's participant
    /// error (µs).
    public var participantToOwnRelay: Percentiles?
    /// Each participant's session time against the authority's: what participants on different
    /// relays must agree with (µs).
    public var participantToAuthority: Percentiles?
    /// The largest change of any relay's offset from the authority's rate between two readings
    /// 10 ms apart (µs): slewing shows as a fraction of a µs, a step as its size.
    public var largestOffsetChange: Double
}

/// What `tandem bench cluster --clock` measured.
public struct ClusterClockReport: Sendable, Hashable, Codable {
    /// Relays started.
    public var relays: Int
    /// With every relay up.
    public var before: ClusterClockPhase
    /// After the authority was killed, among the survivors.
    public var after: ClusterClockPhase?
    /// From the kill until the next relay was the authority and the rest followed it (s).
    public var handoverSeconds: Double?
    /// Steps any relay's clock took (0 expected).
    public var steps: Int

    /// The report as JSON.
    public func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(self)
    }

    /// The report as a table.
    public var table: String {
        func cells(_ percentiles: Percentiles?) -> String {
            guard let percentiles else { return "| – | – | – |" }
            return String(format: "| %.1f | %.1f | %.1f |", percentiles.p50, percentiles.p99, percentiles.max)
        }
        var lines = ["Cluster time: \(relays) relays on one nats-server, clocks seconds and ±50 ppm apart; errors in µs, read every 10 ms", ""]
        let phases = [("all relays up", before)] + (after.map { [("after the authority was killed", $0)] } ?? [])
        for (name, phase) in phases {
            lines.append("\(name) (\(String(format: "%.1f", phase.seconds)) s):")
            lines.append("")
            lines.append("| error (µs) | p50 | p99 | max |")
            lines.append("|---|---|---|---|")
            lines.append("| relay vs the authority " + cells(phase.relayAgreement))
            lines.append("| relay's estimate (unslewed) vs the authority " + cells(phase.relayEstimate))
            lines.append("| relay's own error bound " + cells(phase.relayErrorBound))
            lines.append("| participant vs its own relay (one relay alone) " + cells(phase.participantToOwnRelay))
            lines.append("| participant vs the authority (across relays) " + cells(phase.participantToAuthority))
            lines.append(String(format: "| largest offset change in 10 ms | | | %.2f |", phase.largestOffsetChange))
            lines.append("")
        }
        if let handoverSeconds { lines.append(String(format: "new authority followed %.2f s after the kill; steps: %d", handoverSeconds, steps)) }
        return lines.joined(separator: "\n") + "\n"
    }
}
