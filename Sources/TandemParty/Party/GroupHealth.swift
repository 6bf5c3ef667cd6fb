import Foundation
import TandemClock

/// The group's health as this participant knows it, one line per participant (what the `h` key
/// shows): for this participant, how far its player is from the group's timeline and the error
/// bound of its clock; for every participant, whether the group waits for it, it is away, it is
/// getting ready to play, it plays a different file, or it has said nothing yet; and for the
/// others, what each last said of its own health (`HealthReport`: how late its pictures are, its
/// clock's error bound, its player), while that report is recent. This participant's line also
/// says whether its chain over the session's order is vouched for, and the line of anyone the
/// relay was found showing another history says so.
///
/// Pure: a snapshot in (`WatchParty.health()` takes one), lines out.
public struct GroupHealth: Sendable, Equatable {
    /// A suspension a participant holds.
    public struct Suspension: Sendable, Equatable {
        /// Its reason (`SuspensionReason`'s raw value).
        public var reason: String
        /// Whether the group waits for it.
        public var holdsGroup: Bool

        /// A suspension.
        public init(reason: String, holdsGroup: Bool) { (self.reason, self.holdsGroup) = (reason, holdsGroup) }
    }

    /// Where this participant's chain over the session's order stands (`OrderedChainStatus`).
    public struct Chain: Sendable, Equatable {
        /// The order it starts after: 0 from the first record, else a snapshot's.
        public var startOrder: UInt64
        /// Whether its start is more than one participant's word.
        public var isVouched: Bool

        /// A chain starting after `startOrder`, vouched for or not.
        public init(startOrder: UInt64, isVouched: Bool) { (self.startOrder, self.isVouched) = (startOrder, isVouched) }
    }

    /// One participant as known here.
    public struct Member: Sendable, Equatable {
        /// Its name, as the status line names it.
        public var name: String
        /// Whether it is this participant.
        public var isLocal: Bool
        /// The reasons of its suspensions, and whether the group waits for each.
        public var suspensions: [Suspension]
        /// Whether the relay saw its connection close (it leaves 3 s later unless it comes back).
        public var isAway: Bool
        /// Whether it plays content other than the group's under the item's name.
        public var isMismatched: Bool
        /// Whether an open play waits for it to be ready.
        public var isPrerolling: Bool
        /// Whether it has said what it plays.
        public var hasReported: Bool
        /// What it last said of its own health, while recent (others only).
        public var report: HealthReport?
        /// Whether its chain head differed from this participant's: the relay showed the two of
        /// them different histories (others only).
        public var hasDiverged: Bool

        /// A member.
        public init(name: String, isLocal: Bool = false, suspensions: [Suspension] = [], isAway: Bool = false,
                    isMismatched: Bool = false, isPrerolling: Bool = false, hasReported: Bool = true, report: HealthReport? = nil,
                    hasDiverged: Bool = false) {
            (self.name, self.isLocal, self.suspensions, self.isAway) = (name, isLocal, suspensions, isAway)
            self.hasDiverged = hasDiverged
            (self.isMismatched, self.isPrerolling, self.hasReported, self.report) = (isMismatched, isPrerolling, hasReported, report)
        }
    }

    /// Everyone here, this participant among them.
    public var members: [Member]
    /// Whether the group plays (a rate above 0) rather than being paused or waiting.
    public var isPlaying: Bool
    /// This player's media time less the group's timeline now, while the group plays and the
    /// player says; nil when not measured.
    public var syncError: TimeSpan?
    /// The error bound of this participant's session clock; nil before its first estimate.
    public var clockErrorBound: TimeSpan?
    /// Where this participant's chain over the session's order stands; nil before it starts.
    public var chain: Chain?

    /// A snapshot.
    public init(members: [Member], isPlaying: Bool, syncError: TimeSpan?, clockErrorBound: TimeSpan?, chain: Chain? = nil) {
        (self.members, self.isPlaying, self.syncError, self.clockErrorBound) = (members, isPlaying, syncError, clockErrorBound)
        self.chain = chain
    }

    /// The others whose own reports say they are off the group (`HealthReport.isOff`), by name:
    /// what the status line names.
    public var offMembers: [String] {
        members.filter { !$0.isLocal && $0.report?.isOff == true }.map(\.name).sorted()
    }

    /// The lines: this participant first, then the others by name.
    public var lines: [String] {
        let ordered = members.filter(\.isLocal) + members.filter { !$0.isLocal }.sorted { $0.name < $1.name }
        return ordered.map(line)
    }

    private func line(_ member: Member) -> String {
        var parts: [String] = []
        if member.isLocal {
            if let syncError {
                parts.append(String(format: "%.1f ms ", abs(syncError.seconds * 1e3)) + (syncError.nanoseconds < 0 ? "behind" : "ahead of") + " the group")
            } else {
                parts.append(isPlaying ? "distance from the group not measured yet" : "paused with the group")
            }
            parts.append(clockErrorBound.map { String(format: "clock ±%.2f ms", $0.seconds * 1e3) } ?? "clock not synchronised yet")
            if let chain {
                parts.append(chain.isVouched ? (chain.startOrder == 0 ? "history checked from the start" : "history vouched for by others")
                    : "history from one participant's snapshot (order \(chain.startOrder)), not vouched for yet")
            }
        }
        if member.hasDiverged { parts.append("the relay showed it different changes than you") }
        if member.isAway { parts.append("away: its connection dropped") }
        for suspension in member.suspensions {
            parts.append(EventSentence.reason(suspension.reason) + (suspension.holdsGroup ? " (the group waits)" : ""))
        }
        if member.isMismatched { parts.append("plays a different file") }
        if member.isPrerolling { parts.append("getting ready to play") }
        if !member.hasReported { parts.append("has not said what it plays yet") }
        if !member.isLocal, let report = member.report {
            // Its own word on how it plays, after what the group knows of it.
            parts += report.words.filter { !(parts.contains("getting ready to play") && $0 == "getting ready to play") }
        }
        if !member.isLocal && parts.isEmpty { parts.append(isPlaying ? "playing with the group" : "with the group") }
        return "\(member.isLocal ? "you (\(member.name))" : member.name): " + parts.joined(separator: ", ")
    }
}
