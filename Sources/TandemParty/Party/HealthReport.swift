import Foundation
import Tandem
import TandemClock

/// What a participant says of itself on the session's unreliable path, about once a second, so
/// that everyone's health table (`h`, `health`, `--events json`'s `health` events) shows how
/// everyone is doing, not only this participant: how late its pictures (and its sound, where it
/// plays some) are against the group's timeline, its clock's error bound, whether it plays, waits
/// or stalls, its player, its latency offset and its chain head over the session's order. A few
/// hundred bytes; whole microseconds and milliseconds.
///
/// A report is a peer's word: a receiver keeps only reports whose values are plausible
/// (`isPlausible`) and shows them as what that participant says.
public struct HealthReport: Codable, Sendable, Equatable, CustomMessageIdentifiable {
    /// Where the participant's playback stands.
    public enum State: String, Codable, Sendable, Equatable {
        /// Playing with the group.
        case playing
        /// Paused with the group.
        case paused
        /// Getting ready to play (pre-rolling, or the group waits).
        case waiting
        /// Its player ran out of frames and is catching up.
        case stalled
    }

    /// Which player the participant runs.
    public enum Player: String, Codable, Sendable, Equatable {
        /// Tandem's own player.
        case builtIn = "built-in"
        /// mpv, driven over its IPC.
        case mpv
    }

    /// The messenger's route for health reports.
    public static let messageIdentifier = "tandem.health"

    /// How late its pictures reached their instants on the group's timeline, the median over
    /// about the last second, in µs (negative: early); nil while it does not play, or before it
    /// has measured. Its latency offset is not counted: a player that presents early for an
    /// output that lags is on time.
    public var pictureLateness: Int?
    /// How late its sound reaches the output against the group's timeline, by the output's own
    /// timing of its last write, in µs (negative: early); nil while it does not play, or with no
    /// sound output (mpv's sound is in `pictureLateness`, which its audio clock gives).
    public var soundLateness: Int?
    /// Its session clock's error bound, in µs; nil before its first estimate.
    public var clockErrorBound: Int?
    /// Its round trip to the relay's time service, in µs (the median of its clock's recent
    /// samples); nil before its first, or for a clock read without the network.
    public var roundTrip: Int?
    /// Where its playback stands.
    public var state: State
    /// Which player it runs.
    public var player: Player
    /// The latency offset it presents with, in ms.
    public var latencyOffset: Int
    /// The newest order its chain over the session's order reaches (`GroupSession.orderedChain`),
    /// with `head`: a receiver holding another head at that order was shown a different history
    /// than its sender, at that order or at any before it.
    public var order: UInt64?
    /// Its chain head at `order`, 64 hexadecimal digits.
    public var head: String?

    /// A report.
    public init(pictureLateness: Int?, clockErrorBound: Int?, state: State, player: Player, latencyOffset: Int,
                order: UInt64? = nil, head: String? = nil) {
        (self.pictureLateness, self.clockErrorBound, self.state) = (pictureLateness, clockErrorBound, state)
        (self.player, self.latencyOffset, self.order, self.head) = (player, latencyOffset, order, head)
    }

    /// Whether every value is one a player could report: lateness and error bound within an
    /// hour, an offset within the party's range. A report that is not is dropped.
    public var isPlausible: Bool {
        let hour = 3_600_000_000
        return (pictureLateness.map { abs($0) <= hour } ?? true) && (soundLateness.map { abs($0) <= hour } ?? true)
            && (clockErrorBound.map { $0 >= 0 && $0 <= hour } ?? true)
            && (roundTrip.map { $0 >= 0 && $0 <= hour } ?? true)
            && WatchParty.Configuration.latencyOffsets.contains(latencyOffset)
            && (head.map { $0.utf8.count == 64 && $0.allSatisfy(\.isHexDigit) } ?? true) && (head == nil) == (order == nil)
    }

    /// How far from the group's timeline a participant may present before the status line
    /// names it as off: 20 ms, under what people notice between two screens in one room.
    public static let offThreshold = TimeSpan.milliseconds(20)

    /// Whether this report says the participant's pictures or sound are further from the group
    /// than `offThreshold` (or that it stalled) while the group plays.
    public var isOff: Bool {
        if state == .stalled { return true }
        guard state == .playing else { return false }
        return [pictureLateness, soundLateness].contains { lateness in
            lateness.map { abs(Int64($0)) * 1_000 > HealthReport.offThreshold.nanoseconds } ?? false
        }
    }

    /// The relay's default fan-out budget per session, in deliveries a second: health reports
    /// may take a twentieth of it.
    public static let fanoutBudget = 200_000.0

    /// How often each of `participants` sends its report: once a second, or less often in a
    /// party so large that the reports (each delivered to everyone else) would take more than a
    /// twentieth of `fanoutBudget` deliveries a second.
    public static func interval(participants: Int, fanoutBudget: Double = HealthReport.fanoutBudget) -> TimeSpan {
        let count = Double(max(participants, 1))
        let seconds = max(1, count * (count - 1) * 20 / max(fanoutBudget, 1))
        return TimeSpan(nanoseconds: Int64(seconds * 1e9))
    }

    /// How long a report stands for its sender: three of its intervals; after that the table
    /// says it has not reported lately.
    public static func lifetime(participants: Int) -> TimeSpan {
        TimeSpan(nanoseconds: 3 * interval(participants: participants).nanoseconds)
    }

    /// The words for this report in a health table's line: "12.3 ms late, clock ±0.40 ms, mpv".
    public var words: [String] {
        var parts: [String] = []
        switch state {
        case .stalled: parts.append("stalled: its player is catching up")
        case .waiting: parts.append("getting ready to play")
        case .paused: parts.append("paused with the group")
        case .playing:
            if let pictureLateness {
                let milliseconds = Double(pictureLateness) / 1_000
                parts.append(abs(milliseconds) < 0.05 ? "on time"
                    : String(format: "%.1f ms ", abs(milliseconds)) + (milliseconds > 0 ? "late" : "early"))
            } else {
                parts.append("playing, not measured yet")
            }
            if let soundLateness {
                let milliseconds = Double(soundLateness) / 1_000
                parts.append(abs(milliseconds) < 0.05 ? "sound on time"
                    : String(format: "sound %.1f ms ", abs(milliseconds)) + (milliseconds > 0 ? "late" : "early"))
            }
        }
        if let clockErrorBound { parts.append(String(format: "clock ±%.2f ms", Double(clockErrorBound) / 1_000)) }
        if let roundTrip { parts.append(String(format: "round trip %.1f ms", Double(roundTrip) / 1_000)) }
        parts.append(player.rawValue)
        if latencyOffset != 0 { parts.append("offset \(latencyOffset) ms") }
        return parts
    }
}
