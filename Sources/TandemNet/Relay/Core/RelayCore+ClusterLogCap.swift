import Foundation
import TandemWire

/// Each session's log in a cluster is bounded, as a single relay's memory is: a session may put
/// at most `sessionLogLimit` bytes in its JetStream subject (`ClusterLogEntry.encodedSizeEstimate`
/// of every entry, counted as the replica applies them, so every relay counts the same), and a
/// participant's frame that would take it over (a message, a proposal, an attachment's add or
/// chunk) is refused before it is published: the sender is dropped with `limitReached`, as a
/// single relay drops an upload over its journal's cap. What ends or empties a session (a leave,
/// an end, a removal, a load request) and the relays' own entries (joins, cursors, departures)
/// still go, so that a session at its cap can still be left and ended.
///
/// A session's snapshot counts as what it takes in the log: once a snapshot is complete, the
/// log's count is the snapshot's bytes, and the entries after it add to that
/// (`RelayCore+ClusterCompaction.swift`); the entries before it are purged.
///
/// The count adds this relay's entries on their way to the log; other relays' entries in flight
/// are not known here, so a session's log can pass its cap by what the other relays have in
/// flight at that moment (each at most a batch). The streams' own byte limit, with new messages
/// refused, is a last resort under it (`ClusterRelay`), not the fairness mechanism.
extension RelayCore {
    /// How many bytes a session's log may hold unless the relay is told otherwise.
    public static let defaultClusterSessionLogLimit = 256 * 1024 * 1024

    /// The refusal of `frame` (to be logged as `event`) when the log of `session` has no room
    /// for it; nil when it goes on.
    func clusterLogRefusal(_ session: UUID, _ frame: RelayFrame, _ event: ClusterLogEntry.Event) -> RelayFault? {
        guard let cluster else { return nil }
        switch frame {
        case .message, .proposal, .authoredProposal, .attachmentAdd, .attachmentChunk: break
        default: return nil
        }
        let size = ClusterLogEntry(session: session, relay: cluster.relay, connection: 0, event: event).encodedSizeEstimate
        let held = (cluster.logBytes[session] ?? 0) + (cluster.pendingLogBytes[session] ?? 0)
        guard held + size > cluster.sessionLogLimit else { return nil }
        return RelayFault(.limitReached, "the session's log holds \(held) bytes; a frame of \(size) more is over its limit of "
            + "\(cluster.sessionLogLimit) bytes")
    }

    /// The log of the session that `entry` belongs to is `entry`'s size longer, for whoever
    /// appended it; this relay's own is no longer on its way.
    mutating func noteClusterLogApplied(_ entry: ClusterLogEntry) {
        guard let relay = cluster?.relay else { return }
        let size = entry.encodedSizeEstimate
        cluster?.logBytes[entry.session, default: 0] += size
        if entry.relay == relay { reducePending(entry.session, by: size) }
        noteClusterTail(entry, size: size)
    }

    /// This relay's `entry` is on its way to the log.
    mutating func noteClusterLogSubmitted(_ entry: ClusterLogEntry) {
        cluster?.pendingLogBytes[entry.session, default: 0] += entry.encodedSizeEstimate
    }

    /// This relay's `entry` never reached the log.
    mutating func noteClusterLogLost(_ entry: ClusterLogEntry) {
        reducePending(entry.session, by: entry.encodedSizeEstimate)
    }

    /// Forgets the counts of `session`, no longer followed here: replaying its log counts again.
    mutating func forgetClusterLog(_ session: UUID) {
        cluster?.logBytes[session] = nil
        cluster?.pendingLogBytes[session] = nil
        cluster?.tailBytes[session] = nil
        cluster?.tailEntries[session] = nil
        cluster?.snapshotBytes[session] = nil
        cluster?.compactions.remove(session)
    }

    /// The bytes of `session`'s log applied here so far (nil when it is not loaded).
    public func clusterLogBytes(of session: UUID) -> Int? { cluster?.logBytes[session] }

    private mutating func reducePending(_ session: UUID, by size: Int) {
        guard let pending = cluster?.pendingLogBytes[session] else { return }
        cluster?.pendingLogBytes[session] = pending > size ? pending - size : nil
    }
}
