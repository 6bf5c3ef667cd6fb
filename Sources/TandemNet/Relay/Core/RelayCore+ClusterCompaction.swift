import Foundation
import TandemWire

/// Each session's log in a cluster is compacted: a relay writes a snapshot of the session's
/// state into the log (`ClusterSessionSnapshot`, in `ClusterSnapshotPart`s), then purges what the
/// snapshot covers, so that the log holds the session's live state and the entries since, and a
/// relay that loads the session starts from the snapshot.
///
/// When: every relay counts the bytes and the entries applied since the session's last snapshot
/// (`tailBytes`, `tailEntries`, the same on every relay). The entry that takes the bytes across a
/// multiple of the bound (`compactionThreshold`, or the last snapshot's size when larger, so that
/// writing snapshots costs at most as much as the entries they replace), or the entries to a
/// multiple of `compactionEntries` while the bytes are at least the last snapshot's size (so
/// that a relay loading a session of many small entries replays a bounded number of them, at no
/// more cost), names the relay that compacts: the one that appended it, and no other. Should it
/// fail (another relay's entry came between its state and its snapshot, or it stopped), the next
/// multiple names another.
///
/// A complete snapshot, wherever it is read, resets the count: the log then counts the snapshot's
/// bytes and what follows (the cap, `RelayCore+ClusterLogCap.swift`, counts the same). A relay
/// whose replica already holds what the snapshot covers (it follows the log) keeps its replica;
/// one that does not (it is loading the session from the snapshot, or missed entries that a
/// purge took before it read them) takes the snapshot's state (`applyClusterSnapshot`).
extension RelayCore {
    /// How many bytes of entries since a session's last snapshot start a compaction unless the
    /// relay is told otherwise (at most a quarter of the session's cap).
    public static let defaultClusterCompactionThreshold = 16 * 1024 * 1024

    /// How many entries since a session's last snapshot start a compaction, once they take at
    /// least as many bytes as that snapshot, unless the relay is told otherwise.
    public static let defaultClusterCompactionEntries = 2_000

    /// How many of `session`'s entries were applied since its last snapshot (nil when it is not
    /// loaded).
    public func clusterTailEntries(of session: UUID) -> Int? { cluster?.tailEntries[session] }

    /// The bytes of `session`'s entries applied since its last snapshot (nil when it is not loaded).
    public func clusterTailBytes(of session: UUID) -> Int? { cluster?.tailBytes[session] }

    /// The bound past which `session`'s log is compacted: the threshold, or the last snapshot's
    /// size when larger.
    func compactionBound(of session: UUID) -> Int {
        guard let cluster else { return .max }
        return max(cluster.compactionThreshold, cluster.snapshotBytes[session] ?? 0)
    }

    /// `entry`, of `size` bytes, was applied: it counts since the last snapshot, and when it takes
    /// the bytes across a multiple of the bound, or the entries to a multiple of
    /// `compactionEntries` with the bytes at least the last snapshot's, and is this relay's, this
    /// relay compacts.
    mutating func noteClusterTail(_ entry: ClusterLogEntry, size: Int) {
        guard let relay = cluster?.relay else { return }
        let before = cluster?.tailBytes[entry.session] ?? 0
        let after = before + size
        cluster?.tailBytes[entry.session] = after
        let entries = (cluster?.tailEntries[entry.session] ?? 0) + 1
        cluster?.tailEntries[entry.session] = entries
        let bound = compactionBound(of: entry.session)
        let byBytes = after / bound > before / bound
        let byEntries = entries % max(cluster?.compactionEntries ?? .max, 1) == 0 && after >= (cluster?.snapshotBytes[entry.session] ?? 0)
        if entry.relay == relay, byBytes || byEntries, sessions[entry.session] != nil {
            cluster?.compactions.insert(entry.session)
        }
    }

    /// Whether this relay is to compact `session`'s log now; asked by the shell after each
    /// message it applies, and true once for each time the count crossed the bound.
    public mutating func takeClusterCompaction(_ session: UUID) -> Bool {
        cluster?.compactions.remove(session) != nil
    }

    /// The encoded state of `session` as the replica holds it now (`ClusterSessionSnapshot`),
    /// nil when it does not hold it.
    public func clusterSnapshot(of session: UUID) -> [UInt8]? {
        guard let cluster, let state = sessions[session] else { return nil }
        var homes: [UUID: UInt64] = [:]
        for id in state.order {
            if let home = cluster.homes[ParticipantKey(session: session, participant: id)] { homes[id] = home }
        }
        return ClusterSessionSnapshot.encode(state, homes: homes)
    }

    /// A complete snapshot of `session` (its parts' state `state`, taking `stored` bytes in the
    /// log) was read from the log, in log order. With `restore` false, the replica holds what it
    /// covers already: only the counts start again from it. With `restore` true, the replica
    /// takes its state: participants that are not in it are gone (a connection here is closed),
    /// those that are keep what is this relay's own (their connection, their timers), and a
    /// connection here is sent what the entries this relay missed gave its participant, in
    /// sequence after what it had (paced as a resumption is).
    /// Throws, changing nothing, when `state` does not decode.
    public mutating func applyClusterSnapshot(_ state: [UInt8], of session: UUID, stored: Int, restore: Bool,
                                              at now: Int64) throws(ClusterLogError) -> [RelayDirective] {
        guard cluster != nil else { return [] }
        var directives: [RelayDirective] = []
        if restore {
            let snapshot = try ClusterSessionSnapshot.decode(state, session: session)
            directives = restoreClusterSession(snapshot, at: now) + clusterSessionAppeared(session, at: now)
        }
        cluster?.logBytes[session] = stored
        cluster?.snapshotBytes[session] = stored
        cluster?.tailBytes[session] = 0
        cluster?.tailEntries[session] = 0
        cluster?.compactions.remove(session)
        return clusterPaced(directives)
    }

    private mutating func restoreClusterSession(_ snapshot: ClusterSessionSnapshot, at now: Int64) -> [RelayDirective] {
        var restored = snapshot.state
        let id = restored.id
        let old = sessions[id]
        var directives: [RelayDirective] = []
        var keys: Set<ParticipantKey> = []
        // This relay's participants still there, with the first sequence number their connection
        // has not been sent: what the entries it missed gave them goes to them now.
        var catchingUp: [(ParticipantKey, RelayConnectionID, UInt64)] = []
        for (participantID, participant) in old?.participants ?? [:] {
            let key = ParticipantKey(session: id, participant: participantID)
            keys.insert(key)
            tokens[participant.token] = nil
            if var kept = restored.participants[participantID] {
                // Its place here: its connection, and what runs on this relay's clock.
                kept.connection = participant.connection
                kept.disconnectedAt = participant.disconnectedAt
                kept.grace = participant.grace
                kept.acknowledged = min(participant.acknowledged, kept.received)
                kept.lastAcknowledgement = participant.lastAcknowledgement
                kept.unacknowledgedBytes = kept.acknowledged < kept.received ? participant.unacknowledgedBytes : 0
                kept.acknowledgedAt = participant.acknowledgedAt
                kept.roundTrip = participant.roundTrip
                kept.datagramsConfirmedAt = participant.datagramsConfirmedAt
                kept.datagramAddress = participant.datagramAddress
                kept.fanoutMeter = participant.fanoutMeter
                restored.participants[participantID] = kept
                if let connection = participant.connection, kept.outbox.nextSequence > participant.outbox.nextSequence {
                    catchingUp.append((key, connection, participant.outbox.nextSequence))
                }
            } else {
                directives.append(.forgetToken(participant.token))
                if let connection = participant.connection {
                    connections[connection]?.phase = .closing
                    directives += [.send(connection, .error(RelayFault(.disconnected, "no longer in the session"))), .close(connection)]
                }
                cluster?.homes[key] = nil
                cluster?.stranded.remove(key)
                cluster?.backlog[key] = nil
                cluster?.submitted[key] = nil
                cluster?.cursors[key] = nil
                cluster?.departing.remove(key)
            }
        }
        restored.creatorAddress = old?.creatorAddress
        restored.lastRouted = old?.lastRouted ?? .min
        restored.fanout = old?.fanout
        // What the budget counts of it, from what it holds: its activity, the journal (with the
        // uploads' reservations), the history's and the outboxes' bodies, the former participants.
        let former = restored.former
        restored.former = []
        var held = restored.activity.count + restored.journalBytes + restored.orderedHistory.bodyBytes
        for entry in former { held += restored.rememberFormer(entry) }
        for participant in restored.participants.values { held += participant.outbox.bodyBytes }
        let previous = old?.accountedBytes ?? 0
        restored.accountedBytes = held
        accountedBytes += held - previous
        holdBySource(restored.creatorAddress, held - previous)
        for participantID in restored.order {
            let key = ParticipantKey(session: id, participant: participantID)
            keys.insert(key)
            guard let participant = restored.participants[participantID] else { continue }
            tokens[participant.token] = key
            if old?.participants[participantID] == nil {
                restored.participants[participantID]?.lastAcknowledgement = AcknowledgementSchedule.start(
                    participantID, at: now, interval: configuration.acknowledgementInterval)
            }
        }
        sessions[id] = restored
        for (participantID, home) in snapshot.homes {
            let key = ParticipantKey(session: id, participant: participantID)
            cluster?.homes[key] = home
            if cluster?.relaysHeard[home] ?? .min < now { cluster?.relaysHeard[home] = now }
        }
        for key in keys { scheduleTick(key) }
        // Paced as a resumption is: a window now, the rest as the connection drains. One already
        // paced gets them from its outbox as it drains.
        for (key, connection, first) in catchingUp where cluster?.backlog[key] == nil {
            let pending = restored.participants[key.participant]?.outbox.pending ?? []
            for frame in pending where (frame.sequence ?? 0) >= first { directives.append(.send(connection, frame)) }
            directives += clusterMarkBacklog(key, on: connection, from: first)
        }
        return directives
    }
}
