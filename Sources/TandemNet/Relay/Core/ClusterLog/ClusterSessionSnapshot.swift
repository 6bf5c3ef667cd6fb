import Foundation
import TandemWire

/// One message of a relay's snapshot of a session in the session's log: a piece of the encoded
/// state (`ClusterSessionSnapshot`), with what the snapshot covers.
///
/// A snapshot is the session as a replica held it once it had applied the log through the
/// stream sequence `covers`, and nothing after: a relay that finds a whole snapshot (every part,
/// one after another on the subject, the first right after `covers`) can start from it and
/// apply only what follows. Its parts are published one after another with compare-and-set on
/// the subject's last sequence, the first on `covers` itself, so that no entry lies between the
/// state it holds and the snapshot (`ClusterSessionLog`).
public struct ClusterSnapshotPart: Sendable, Hashable {
    /// The session.
    public var session: UUID
    /// The relay that took the snapshot.
    public var relay: UInt64
    /// The snapshot's number (random), the same in each of its parts.
    public var snapshot: UInt64
    /// The stream sequence of the last log message the snapshot's state reflects.
    public var covers: UInt64
    /// Which part this is, from 0.
    public var index: Int
    /// How many parts the snapshot has.
    public var count: Int
    /// This part's piece of the encoded state.
    public var bytes: [UInt8]

    /// Part `index` of `count` of snapshot `snapshot` of `session`, taken by `relay` at `covers`.
    public init(session: UUID, relay: UInt64, snapshot: UInt64, covers: UInt64, index: Int, count: Int, bytes: [UInt8]) {
        self.session = session
        self.relay = relay
        self.snapshot = snapshot
        self.covers = covers
        self.index = index
        self.count = count
        self.bytes = bytes
    }
}

extension ClusterLogCodec {
    private static let snapshotMagic: [UInt8] = [0x54, 0x53, 1] // "TS", version 1
    /// The most bytes of a snapshot's state one message carries: under nats-server's 1 MiB, and
    /// small enough that the message read through `STREAM.MSG.GET` (base64 in JSON, a third
    /// larger) stays within what the NATS client takes (`max_payload` and 64 KiB).
    public static let snapshotPartBytes = 768 * 1024
    /// The most parts a snapshot has: more than a session at every limit needs.
    public static let maximumSnapshotParts = 4096

    /// Whether `bytes` is a snapshot's part (not a batch of entries): what a relay of this build
    /// reads apart.
    public static func isSnapshotPart(_ bytes: [UInt8]) -> Bool { bytes.starts(with: snapshotMagic) }

    /// One part's message.
    public static func encode(_ part: ClusterSnapshotPart) -> [UInt8] {
        var writer = LogWriter()
        writer.bytes.append(contentsOf: snapshotMagic)
        writer.uuid(part.session)
        writer.u64(part.relay)
        writer.u64(part.snapshot)
        writer.u64(part.covers)
        writer.u32(UInt32(part.index))
        writer.u32(UInt32(part.count))
        writer.data(part.bytes)
        return writer.bytes
    }

    /// A part from its message.
    public static func decodeSnapshotPart(_ bytes: [UInt8]) throws(ClusterLogError) -> ClusterSnapshotPart {
        var reader = LogReader(bytes: bytes[...])
        guard try reader.take(3) == snapshotMagic[...] else { throw ClusterLogError("not a snapshot part (or another version)") }
        let session = try reader.uuid(), relay = try reader.u64(), snapshot = try reader.u64(), covers = try reader.u64()
        let index = Int(try reader.u32()), count = Int(try reader.u32())
        guard count >= 1, count <= maximumSnapshotParts, index < count else { throw ClusterLogError("snapshot part \(index) of \(count)") }
        let piece = try reader.data(limit: snapshotPartBytes)
        guard reader.isAtEnd else { throw ClusterLogError("bytes after a snapshot part") }
        return ClusterSnapshotPart(session: session, relay: relay, snapshot: snapshot, covers: covers, index: index, count: count, bytes: piece)
    }

    /// The parts that carry `state` (at least one, each at most `snapshotPartBytes`).
    public static func parts(of state: [UInt8], session: UUID, relay: UInt64, snapshot: UInt64, covers: UInt64) -> [ClusterSnapshotPart] {
        let pieces = stride(from: 0, to: max(state.count, 1), by: snapshotPartBytes).map { Array(state[$0..<min($0 + snapshotPartBytes, state.count)]) }
        return pieces.enumerated().map { index, piece in
            ClusterSnapshotPart(session: session, relay: relay, snapshot: snapshot, covers: covers, index: index, count: pieces.count, bytes: piece)
        }
    }
}

/// A session as a replica holds it, in a snapshot: everything the log made of it that every
/// relay holds alike, and nothing of one relay's own (connections, timers on its clock, round
/// trips, datagram registrations, fan-out spent).
///
/// That is the session's verifier and activity; its participants in join order, each with its
/// signed entry, token, whether it is away, the last of its frames applied, its outbox (the next
/// sequence number and the frames not yet acknowledged, so that it can resume on any relay), its
/// upload under way, and the relay it was last admitted at; the journal's attachments with their
/// data and what the journal holds; the ordering counters; the ordered history whole (what a
/// late joiner receives, and what decides what it keeps); and the former participants.
struct ClusterSessionSnapshot {
    /// The session's state, local fields at their defaults.
    var state: RelaySessionState
    /// The relay each participant was last admitted or resumed at, when known.
    var homes: [UUID: UInt64]

    private static let version: UInt8 = 5

    /// The bytes of `state`, with `homes`.
    static func encode(_ state: RelaySessionState, homes: [UUID: UInt64]) -> [UInt8] {
        var writer = LogWriter()
        writer.bytes.append(version)
        writer.data(state.key)
        writer.data(state.activity)
        let participants = state.order.compactMap { id in state.participants[id].map { (id, $0) } }
        writer.u32(UInt32(participants.count))
        for (id, participant) in participants {
            writer.frame(.participantJoined(sequence: 0, participant: participant.entry))
            writer.data(participant.token.bytes)
            writer.bytes.append(participant.away ? 1 : 0)
            writer.u64(participant.received)
            writer.u64(participant.outbox.nextSequence)
            writer.u32(UInt32(participant.outbox.count))
            for frame in participant.outbox.pending { writer.frame(frame) }
            if let upload = participant.upload {
                writer.bytes.append(1)
                writer.u64(upload.request)
                writer.frame(.journalEntry(upload.entry))
                writer.data(upload.data)
                writer.u64(UInt64(upload.reserved))
                writer.bytes.append(upload.refusal == nil ? 0 : 1)
                if let refusal = upload.refusal { writer.frame(.outcome(sequence: 0, request: 0, fault: refusal)) }
            } else {
                writer.bytes.append(0)
            }
            writer.u64(homes[id] ?? 0)
            writer.u64(participant.firstOrder ?? 0)
        }
        let attachments = state.attachmentOrder.compactMap { state.attachments[$0] }
        writer.u32(UInt32(attachments.count))
        for attachment in attachments {
            writer.frame(.journalEntry(attachment.entry))
            writer.data(attachment.data)
        }
        writer.u64(UInt64(state.journalBytes))
        writer.u64(state.nextOrder)
        writer.u64(UInt64(bitPattern: state.lastEffectiveAt))
        let history = state.orderedHistory.retained
        writer.u32(UInt32(history.entries.count))
        for entry in history.entries { writer.frame(.historyEntry(entry)) }
        writer.u64(UInt64(history.recentLimit))
        writer.u32(UInt32(history.publishers.count))
        for (publisher, newest) in history.publishers.sorted(by: { $0.value.order < $1.value.order }) {
            writer.uuid(publisher)
            writer.u64(newest.order)
            writer.u64(newest.reflecting)
        }
        writer.u32(UInt32(history.pinned.count))
        for order in history.pinned.sorted() { writer.u64(order) }
        writer.u32(UInt32(state.former.count))
        for entry in state.former { writer.frame(.participantJoined(sequence: 0, participant: entry)) }
        // The authority: the operators' keys, the keys whose tickets admit, the statement
        // counters, whether invites expire and whether operators alone may end (one byte of
        // flags); then the epoch, the earlier verifiers, who was removed, and the keys the last
        // claim displaced with the claimant's.
        writer.u32(UInt32(state.operatorKeys.count))
        for key in state.operatorKeys { writer.data(key) }
        writer.u32(UInt32(state.ticketKeys.count))
        for key in state.ticketKeys { writer.data(key) }
        writer.u32(UInt32(state.authorityCounters.count))
        for (key, counter) in state.authorityCounters.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            writer.data(key)
            writer.u64(counter)
        }
        writer.bytes.append((state.ticketed ? 1 : 0) | (state.endingByOperators ? 2 : 0))
        writer.u32(UInt32(state.epoch))
        writer.u32(UInt32(state.formerKeys.count))
        for key in state.formerKeys { writer.data(key) }
        writer.u32(UInt32(state.removed.count))
        for id in state.removed.sorted(by: { $0.uuidString < $1.uuidString }) { writer.uuid(id) }
        writer.u32(UInt32(state.displacedKeys.count))
        for key in state.displacedKeys { writer.data(key) }
        writer.u32(state.claimantKey == nil ? 0 : 1)
        if let claimant = state.claimantKey { writer.data(claimant) }
        return writer.bytes
    }

    /// The state of session `id` from `bytes`; throws when they are not a whole snapshot of
    /// this version.
    static func decode(_ bytes: [UInt8], session id: UUID) throws(ClusterLogError) -> ClusterSessionSnapshot {
        var reader = LogReader(bytes: bytes[...])
        guard try reader.u8() == version else { throw ClusterLogError("a snapshot of another version") }
        var state = RelaySessionState(id: id, key: try reader.data(), activity: try reader.data())
        var homes: [UUID: UInt64] = [:]
        for _ in 0..<(try reader.u32()) {
            guard case let .participantJoined(_, entry) = try reader.frame() else { throw ClusterLogError("a snapshot's participant without its entry") }
            var participant = RelaySessionState.Participant(entry: entry, token: RelayToken(try reader.data()), connection: nil)
            participant.away = try reader.u8() == 1
            participant.received = try reader.u64()
            participant.acknowledged = participant.received
            let next = try reader.u64()
            var pending: [RelayFrame] = []
            for _ in 0..<(try reader.u32()) { pending.append(try reader.frame()) }
            guard pending.count < next else { throw ClusterLogError("an outbox of \(pending.count) frames before \(next)") }
            participant.outbox = RelayOutbox(nextSequence: next, pending: pending)
            if try reader.u8() == 1 {
                let request = try reader.u64()
                guard case let .journalEntry(entry) = try reader.frame() else { throw ClusterLogError("an upload without its entry") }
                var upload = RelaySessionState.Upload(request: request, entry: entry, data: try reader.data(limit: RelayLimits.maximumAttachment))
                upload.reserved = Int(clamping: try reader.u64())
                if try reader.u8() == 1 {
                    guard case let .outcome(_, _, fault?) = try reader.frame() else { throw ClusterLogError("an upload's refusal without its fault") }
                    upload.refusal = fault
                }
                participant.upload = upload
            }
            let home = try reader.u64()
            let firstOrder = try reader.u64()
            participant.firstOrder = firstOrder == 0 ? nil : firstOrder
            guard state.participants[entry.id] == nil else { throw ClusterLogError("participant \(entry.id) twice in a snapshot") }
            if home != 0 { homes[entry.id] = home }
            state.order.append(entry.id)
            state.participants[entry.id] = participant
        }
        for _ in 0..<(try reader.u32()) {
            guard case let .journalEntry(entry) = try reader.frame() else { throw ClusterLogError("an attachment without its entry") }
            let data = try reader.data(limit: RelayLimits.maximumAttachment)
            guard state.attachments[entry.id] == nil else { throw ClusterLogError("attachment \(entry.id) twice in a snapshot") }
            state.attachmentOrder.append(entry.id)
            state.attachments[entry.id] = RelaySessionState.Attachment(entry: entry, data: data)
        }
        state.journalBytes = Int(clamping: try reader.u64())
        state.nextOrder = try reader.u64()
        state.lastEffectiveAt = Int64(bitPattern: try reader.u64())
        var entries: [RelayOrderedEntry] = []
        for _ in 0..<(try reader.u32()) {
            guard case let .historyEntry(entry) = try reader.frame() else { throw ClusterLogError("a history record that is not one") }
            guard entries.last.map({ $0.order < entry.order }) ?? true else { throw ClusterLogError("a history out of order") }
            entries.append(entry)
        }
        let recentLimit = Int(clamping: try reader.u64())
        var publishers: RelayOrderedHistory.Publishers = [:]
        for _ in 0..<(try reader.u32()) {
            let publisher = try reader.uuid()
            publishers[publisher] = (try reader.u64(), try reader.u64())
        }
        var pinned: Set<UInt64> = []
        for _ in 0..<(try reader.u32()) {
            guard pinned.count < entries.count else { throw ClusterLogError("more pinned records than records") }
            pinned.insert(try reader.u64())
        }
        state.orderedHistory = RelayOrderedHistory(entries: entries, recentLimit: recentLimit, publishers: publishers, pinned: pinned)
        for _ in 0..<(try reader.u32()) {
            guard case let .participantJoined(_, entry) = try reader.frame() else { throw ClusterLogError("a former participant without its entry") }
            state.former.append(entry)
        }
        for _ in 0..<(try reader.u32()) {
            guard state.operatorKeys.count < RelayCore.maximumOperatorKeys else { throw ClusterLogError("too many operator keys") }
            state.operatorKeys.append(try reader.data(limit: RelayWireLimits.publicKeyLength))
        }
        for _ in 0..<(try reader.u32()) {
            guard state.ticketKeys.count < RelayCore.maximumTicketKeys else { throw ClusterLogError("too many ticket keys") }
            state.ticketKeys.append(try reader.data(limit: RelayWireLimits.publicKeyLength))
        }
        for _ in 0..<(try reader.u32()) {
            guard state.authorityCounters.count < RelayCore.maximumAuthorityCounters else {
                throw ClusterLogError("too many statement counters")
            }
            let key = try reader.data(limit: RelayWireLimits.publicKeyLength)
            state.authorityCounters[key] = try reader.u64()
        }
        let flags = try reader.u8()
        (state.ticketed, state.endingByOperators) = (flags & 1 != 0, flags & 2 != 0)
        guard let epoch = UInt16(exactly: try reader.u32()) else { throw ClusterLogError("an epoch past the widest") }
        state.epoch = epoch
        for _ in 0..<(try reader.u32()) {
            guard state.formerKeys.count < min(Int(epoch), RelayCore.maximumFormerKeys) else {
                throw ClusterLogError("more earlier verifiers than epochs")
            }
            state.formerKeys.append(try reader.data(limit: RelayWireLimits.publicKeyLength))
        }
        for _ in 0..<(try reader.u32()) {
            guard state.removed.count < Int(epoch) else { throw ClusterLogError("more removed than epochs") }
            state.removed.insert(try reader.uuid())
        }
        for _ in 0..<(try reader.u32()) {
            guard state.displacedKeys.count < RelayCore.maximumOperatorKeys else { throw ClusterLogError("too many displaced operators") }
            state.displacedKeys.append(try reader.data(limit: RelayWireLimits.publicKeyLength))
        }
        switch try reader.u32() {
        case 0: break
        case 1: state.claimantKey = try reader.data(limit: RelayWireLimits.publicKeyLength)
        default: throw ClusterLogError("more than one claimant")
        }
        guard reader.isAtEnd else { throw ClusterLogError("bytes after a snapshot's state") }
        return ClusterSessionSnapshot(state: state, homes: homes)
    }
}
