import Foundation
import TandemWire

/// One event of a session's log in a relay cluster: what changes a session, in the order
/// JetStream gave it. Every relay that follows the session applies the same entries in the same
/// order to its own replica (`RelayCore.applyCluster`), so that order numbers, each participant's
/// relay sequence numbers and the history are the same on every relay. See `docs/SCALING.md`.
///
/// Bodies stay as the participants sealed them: an entry carries the frame a relay received,
/// with no byte added to or taken from its body.
public struct ClusterLogEntry: Sendable, Hashable {
    /// What happened.
    public enum Event: Sendable, Hashable {
        /// A participant was admitted: its signed presence and public key, the datagram token
        /// its relay gave it, and, for a creator, the session's verifier and activity (the
        /// entry creates the session unless another creation came first), and whether the
        /// creator's invites expire (its hello brought a ticket).
        case joined(participant: RelayParticipantEntry, token: [UInt8], verifier: [UInt8]?, activity: [UInt8], ticketed: Bool = false)
        /// A participant resumed on the entry's relay, having received everything through
        /// `received`.
        case resumed(participant: UUID, received: UInt64)
        /// A sequenced frame from a participant (a message of either mode, an attachment's add,
        /// chunk or removal, a load request, a leave, an end, a proposal), with the ordering
        /// instants a proposal gets (zero for the others).
        case frame(participant: UUID, frame: RelayFrame, orderedAt: Int64, effectiveAt: Int64)
        /// A participant's connection was closed by its peer: the others hear it is away.
        case away(participant: UUID)
        /// A participant is removed (its grace period ran out, it was dropped, or too slow).
        case departed(participant: UUID)
        /// A participant acknowledged the relay's frames through `through`: the replicas drop
        /// what they hold for it up to there.
        case cursor(participant: UUID, through: UInt64)
    }

    /// The session.
    public var session: UUID
    /// The relay that appended the entry (a random number each relay process picks).
    public var relay: UInt64
    /// That relay's connection the entry came from, so that it answers there once applied.
    public var connection: UInt64
    /// What happened.
    public var event: Event

    /// An entry of `session` from connection `connection` of relay `relay`.
    public init(session: UUID, relay: UInt64, connection: UInt64, event: Event) {
        self.session = session
        self.relay = relay
        self.connection = connection
        self.event = event
    }

    /// The participant the entry is about.
    public var participant: UUID {
        switch event {
        case let .joined(entry, _, _, _, _): entry.id
        case let .resumed(id, _), let .frame(id, _, _, _), let .away(id), let .departed(id), let .cursor(id, _): id
        }
    }

    /// About how many bytes the entry takes encoded, for batching under the server's payload cap.
    public var encodedSizeEstimate: Int {
        switch event {
        case let .joined(entry, token, verifier, activity, _):
            96 + entry.presence.count + entry.publicKey.count + entry.displayName.utf8.count + token.count + (verifier?.count ?? 0) + activity.count
        case let .frame(_, frame, _, _): 96 + frame.payloadSize + 64
        default: 64
        }
    }
}

/// A datagram's body crossing relays over core NATS (never JetStream): who sent it, to whom.
public struct ClusterDatagram: Sendable, Hashable {
    /// The session.
    public var session: UUID
    /// The relay it came in at, which delivers it to its own participants itself.
    public var relay: UInt64
    /// The sender.
    public var sender: UUID
    /// The recipients, as the sender named them.
    public var recipients: RelayRecipientList
    /// The opaque (sealed) body.
    public var body: [UInt8]

    /// A datagram of `session` from `sender` at `relay`.
    public init(session: UUID, relay: UInt64, sender: UUID, recipients: RelayRecipientList, body: [UInt8]) {
        self.session = session
        self.relay = relay
        self.sender = sender
        self.recipients = recipients
        self.body = body
    }
}

/// Why a log message could not be read.
public struct ClusterLogError: Error, Sendable, CustomStringConvertible {
    /// What was wrong.
    public let reason: String
    /// An error saying `reason`.
    public init(_ reason: String) { self.reason = reason }
    /// The reason.
    public var description: String { "cluster log: \(reason)" }
}

/// The bytes of log messages: a batch of entries per JetStream message (all of one session, in
/// the order they apply), and datagrams. Frames inside use the relay protocol's own encoding.
public enum ClusterLogCodec {
    private static let batchMagic: [UInt8] = [0x54, 0x4C, 2] // "TL", version 2: a creation says whether invites expire
    private static let datagramMagic: [UInt8] = [0x54, 0x44, 1] // "TD", version 1
    /// The most entries one message holds.
    public static let maximumBatch = 4096

    /// One message holding `entries` in order.
    public static func encode(_ entries: [ClusterLogEntry]) -> [UInt8] {
        var writer = LogWriter()
        writer.bytes.append(contentsOf: batchMagic)
        writer.u32(UInt32(entries.count))
        for entry in entries { encode(entry, into: &writer) }
        return writer.bytes
    }

    /// The entries of one message, in order.
    public static func decode(_ bytes: [UInt8]) throws(ClusterLogError) -> [ClusterLogEntry] {
        var reader = LogReader(bytes: bytes[...])
        guard try reader.take(3) == batchMagic[...] else { throw ClusterLogError("not a log batch (or another version)") }
        let count = Int(try reader.u32())
        guard count <= maximumBatch else { throw ClusterLogError("a batch of \(count) entries") }
        var entries: [ClusterLogEntry] = []
        entries.reserveCapacity(count)
        for _ in 0..<count { entries.append(try decodeEntry(&reader)) }
        guard reader.isAtEnd else { throw ClusterLogError("bytes after the last entry") }
        return entries
    }

    /// A datagram's message.
    public static func encode(_ datagram: ClusterDatagram) -> [UInt8] {
        var writer = LogWriter()
        writer.bytes.append(contentsOf: datagramMagic)
        writer.uuid(datagram.session)
        writer.u64(datagram.relay)
        writer.uuid(datagram.sender)
        writer.frame(.message(sequence: 0, recipients: datagram.recipients, reliable: false, body: datagram.body))
        return writer.bytes
    }

    /// A datagram from its message.
    public static func decodeDatagram(_ bytes: [UInt8]) throws(ClusterLogError) -> ClusterDatagram {
        var reader = LogReader(bytes: bytes[...])
        guard try reader.take(3) == datagramMagic[...] else { throw ClusterLogError("not a datagram message") }
        let session = try reader.uuid(), relay = try reader.u64(), sender = try reader.uuid()
        guard case let .message(_, recipients, _, body) = try reader.frame(), reader.isAtEnd else {
            throw ClusterLogError("a datagram message without its message")
        }
        return ClusterDatagram(session: session, relay: relay, sender: sender, recipients: recipients, body: body)
    }

    private static func encode(_ entry: ClusterLogEntry, into writer: inout LogWriter) {
        writer.uuid(entry.session)
        writer.u64(entry.relay)
        writer.u64(entry.connection)
        switch entry.event {
        case let .joined(participant, token, verifier, activity, ticketed):
            writer.bytes.append(1)
            writer.frame(.participantJoined(sequence: 0, participant: participant))
            writer.data(token)
            // 0 joins, 1 creates, 2 creates a session whose invites expire.
            writer.bytes.append(verifier == nil ? 0 : ticketed ? 2 : 1)
            writer.data(verifier ?? [])
            writer.data(activity)
        case let .resumed(participant, received):
            writer.bytes.append(2)
            writer.uuid(participant)
            writer.u64(received)
        case let .frame(participant, frame, orderedAt, effectiveAt):
            writer.bytes.append(3)
            writer.uuid(participant)
            writer.u64(UInt64(bitPattern: orderedAt))
            writer.u64(UInt64(bitPattern: effectiveAt))
            writer.frame(frame)
        case let .away(participant):
            writer.bytes.append(4)
            writer.uuid(participant)
        case let .departed(participant):
            writer.bytes.append(5)
            writer.uuid(participant)
        case let .cursor(participant, through):
            writer.bytes.append(6)
            writer.uuid(participant)
            writer.u64(through)
        }
    }

    private static func decodeEntry(_ reader: inout LogReader) throws(ClusterLogError) -> ClusterLogEntry {
        let session = try reader.uuid(), relay = try reader.u64(), connection = try reader.u64()
        let event: ClusterLogEntry.Event
        switch try reader.u8() {
        case 1:
            guard case let .participantJoined(_, participant) = try reader.frame() else { throw ClusterLogError("a join without its participant") }
            let token = try reader.data()
            let creation = try reader.u8()
            let verifier = try reader.data()
            event = .joined(participant: participant, token: token, verifier: creation != 0 ? verifier : nil, activity: try reader.data(),
                            ticketed: creation == 2)
        case 2:
            event = .resumed(participant: try reader.uuid(), received: try reader.u64())
        case 3:
            let participant = try reader.uuid()
            let orderedAt = Int64(bitPattern: try reader.u64()), effectiveAt = Int64(bitPattern: try reader.u64())
            event = .frame(participant: participant, frame: try reader.frame(), orderedAt: orderedAt, effectiveAt: effectiveAt)
        case 4: event = .away(participant: try reader.uuid())
        case 5: event = .departed(participant: try reader.uuid())
        case 6: event = .cursor(participant: try reader.uuid(), through: try reader.u64())
        case let other: throw ClusterLogError("unknown entry kind \(other)")
        }
        return ClusterLogEntry(session: session, relay: relay, connection: connection, event: event)
    }
}

/// Big-endian fields appended to bytes (the log's messages and the snapshots in them).
struct LogWriter {
    var bytes: [UInt8] = []

    mutating func u32(_ value: UInt32) { for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) } }
    mutating func u64(_ value: UInt64) { for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) } }
    mutating func uuid(_ id: UUID) { withUnsafeBytes(of: id.uuid) { bytes.append(contentsOf: $0) } }
    mutating func data(_ value: [UInt8]) {
        u32(UInt32(value.count))
        bytes.append(contentsOf: value)
    }
    /// A frame with its own length prefix, as on a relay connection.
    mutating func frame(_ frame: RelayFrame) { frame.encode(appendingTo: &bytes) }
}

/// Big-endian fields read from bytes, every length checked before use.
struct LogReader {
    var bytes: ArraySlice<UInt8>

    var isAtEnd: Bool { bytes.isEmpty }

    mutating func take(_ count: Int) throws(ClusterLogError) -> ArraySlice<UInt8> {
        guard count >= 0, bytes.count >= count else { throw ClusterLogError("cut short") }
        let taken = bytes.prefix(count)
        bytes = bytes.dropFirst(count)
        return taken
    }
    mutating func u8() throws(ClusterLogError) -> UInt8 { try take(1).first! }
    mutating func u32() throws(ClusterLogError) -> UInt32 { try take(4).reduce(0) { $0 << 8 | UInt32($1) } }
    mutating func u64() throws(ClusterLogError) -> UInt64 { try take(8).reduce(0) { $0 << 8 | UInt64($1) } }
    mutating func uuid() throws(ClusterLogError) -> UUID {
        let raw = Array(try take(16))
        return UUID(uuid: (raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7],
                           raw[8], raw[9], raw[10], raw[11], raw[12], raw[13], raw[14], raw[15]))
    }
    mutating func data(limit: Int = RelayWireLimits.maximumFrameLength) throws(ClusterLogError) -> [UInt8] {
        let count = Int(try u32())
        guard count <= limit else { throw ClusterLogError("a field of \(count) bytes") }
        return Array(try take(count))
    }
    mutating func frame() throws(ClusterLogError) -> RelayFrame {
        let length = Int(try u32())
        guard length <= RelayWireLimits.maximumFrameLength else { throw ClusterLogError("a frame of \(length) bytes") }
        do {
            return try RelayFrame.decode(try take(length))
        } catch let error as ClusterLogError {
            throw error
        } catch {
            throw ClusterLogError("a frame that does not decode: \(error)")
        }
    }
}
