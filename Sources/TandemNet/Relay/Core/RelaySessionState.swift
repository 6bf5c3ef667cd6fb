import Foundation
import TandemWire

/// One session as the relay core holds it.
struct RelaySessionState: Sendable {
    /// A participant as the relay holds it.
    struct Participant: Sendable {
        var entry: RelayParticipantEntry
        var token: RelayToken
        /// The connection it is on, nil while disconnected.
        var connection: RelayConnectionID?
        /// When it was disconnected, nil while connected.
        var disconnectedAt: Int64?
        /// The last of its sequence numbers the relay has handled.
        var received: UInt64 = 0
        /// The last of its sequence numbers the relay has acknowledged.
        var acknowledged: UInt64 = 0
        var outbox = RelayOutbox()
        /// The attachment it is uploading, if any.
        var upload: Upload?
        /// Its latest round trip to the relay in nanoseconds, nil until one is measured.
        var roundTrip: Int64?
    }

    /// An attachment arriving in chunks.
    struct Upload: Sendable {
        /// The sequence number of the `attachmentAdd`, which the outcome answers.
        var request: UInt64
        var entry: RelayAttachmentEntry
        var data: [UInt8]
        /// Set when the add was refused: chunks are swallowed and the outcome carries this.
        var refusal: RelayFault?
    }

    /// A journal attachment with its data.
    struct Attachment: Sendable {
        var entry: RelayAttachmentEntry
        var data: [UInt8]
    }

    let id: UUID
    let key: [UInt8]
    let activity: [UInt8]
    /// Participant identities in the order they joined.
    var order: [UUID] = []
    var participants: [UUID: Participant] = [:]
    /// Attachment identities in the order they were added.
    var attachmentOrder: [UUID] = []
    var attachments: [UUID: Attachment] = [:]
    var journalBytes = 0
    /// The order the next ordered broadcast gets.
    var nextOrder: UInt64 = 1
    /// The effective time of the last ordered broadcast, which the next never precedes.
    var lastEffectiveAt: Int64 = .min
    /// The ordered broadcasts so far, for late joiners.
    var orderedHistory = RelayOrderedHistory()
    /// Participants who left, with their signed presences, so that late joiners know who signed
    /// the history and the journal (see `RelaySessionState+Former.swift`).
    var former: [RelayParticipantEntry] = []
}
