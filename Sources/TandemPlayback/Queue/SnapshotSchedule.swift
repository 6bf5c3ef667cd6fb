import Foundation
import TandemClock

/// Who publishes a snapshot of the coordination state into the ordered stream, and when, so that
/// the relay can drop the playback records it covers and a late joiner starts from it.
///
/// The publisher is the present participant with the lowest id (`precedes(_:_:)`: byte-wise on
/// the UUID's 16 bytes), which every participant computes alike from who is present; should two
/// briefly disagree (one has not yet seen a departure), both publish, which costs a record and
/// breaks nothing. It publishes once `recordInterval` ordered records (1,000) or `timeInterval`
/// of session time (60 s) have passed since the last snapshot, whichever comes first, and only
/// if any record came since: a quiet session publishes nothing.
///
/// What counts as "since the last snapshot" is the caller's to keep from the ordered stream:
/// the records a joiner starting from the newest snapshot anyone published would apply, those
/// ordered after the order it reflects (when a snapshot arrives, its own or another's, the
/// caller restarts its count from the records ordered between that order and the snapshot's
/// own, so that a snapshot overtaken by a burst is soon followed by another; it does not count
/// snapshots), and that snapshot's ordering instant (or, before the first one, the first
/// record's). A publisher that sent one and has not seen it come back ordered asks again only
/// once it has.
public struct SnapshotSchedule: Sendable, Codable, Equatable {
    /// How many ordered records since the last snapshot make the next one due: 1,000.
    public static let defaultRecordInterval = 1_000
    /// How much session time since the last snapshot makes the next one due: 60 s.
    public static let defaultTimeInterval = TimeSpan.seconds(60)

    /// What the local participant should do now.
    public enum Decision: Sendable, Equatable {
        /// Publish a snapshot now.
        case publish
        /// Nothing is due yet: ask again at this instant (or sooner, when a record arrives).
        case wake(at: SessionInstant)
        /// Nothing to do until a record arrives or who is present changes: no record came since
        /// the last snapshot, or the local participant is not the publisher.
        case idle
    }

    /// Records since the last snapshot that make the next one due.
    public let recordInterval: Int
    /// Session time since the last snapshot that makes the next one due.
    public let timeInterval: TimeSpan

    /// A schedule of a snapshot every `recordInterval` records (at least 1) or `timeInterval`
    /// (at least 0), whichever comes first.
    public init(recordInterval: Int = defaultRecordInterval, timeInterval: TimeSpan = defaultTimeInterval) {
        self.recordInterval = max(1, recordInterval)
        self.timeInterval = max(.zero, timeInterval)
    }

    /// Whether `lhs` comes before `rhs` in the publishers' order: byte-wise on the UUIDs' 16
    /// bytes (as `uuid` holds them), so that the order does not depend on how a UUID is printed.
    public static func precedes(_ lhs: UUID, _ rhs: UUID) -> Bool {
        withUnsafeBytes(of: lhs.uuid) { left in
            withUnsafeBytes(of: rhs.uuid) { right in left.lexicographicallyPrecedes(right) }
        }
    }

    /// The participant that publishes among `present`: the lowest id, or nil when none is.
    public static func publisher(among present: some Sequence<UUID>) -> UUID? {
        present.min(by: precedes)
    }

    /// What `localParticipant` should do at `now`, with `presentParticipants` present (itself
    /// included, when it is), `recordsSinceSnapshot` ordered records since the last snapshot and
    /// that snapshot ordered at `lastSnapshotAt`.
    public func decision(localParticipant: UUID, presentParticipants: some Sequence<UUID>, recordsSinceSnapshot: Int,
                         lastSnapshotAt: SessionInstant, now: SessionInstant) -> Decision {
        guard Self.publisher(among: presentParticipants) == localParticipant else { return .idle }
        guard let due = nextDue(recordsSinceSnapshot: recordsSinceSnapshot, lastSnapshotAt: lastSnapshotAt) else { return .idle }
        return now >= due ? .publish : .wake(at: due)
    }

    /// Whether `localParticipant` should publish a snapshot now (`decision(…) == .publish`).
    public func shouldPublish(localParticipant: UUID, presentParticipants: some Sequence<UUID>, recordsSinceSnapshot: Int,
                              lastSnapshotAt: SessionInstant, now: SessionInstant) -> Bool {
        decision(localParticipant: localParticipant, presentParticipants: presentParticipants,
                 recordsSinceSnapshot: recordsSinceSnapshot, lastSnapshotAt: lastSnapshotAt, now: now) == .publish
    }

    /// When the next snapshot is due, whoever publishes it: at once (`lastSnapshotAt`, or any
    /// instant already past) after `recordInterval` records, `timeInterval` after the last
    /// snapshot with fewer, and never with none (nil).
    public func nextDue(recordsSinceSnapshot: Int, lastSnapshotAt: SessionInstant) -> SessionInstant? {
        guard recordsSinceSnapshot > 0 else { return nil }
        return recordsSinceSnapshot >= recordInterval ? lastSnapshotAt : lastSnapshotAt + timeInterval
    }
}
