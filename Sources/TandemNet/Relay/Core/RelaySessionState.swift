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
        /// How long after `disconnectedAt` it is removed unless it resumes first: the grace
        /// period its connection's way of closing gave it (`RelayCore.onClose`).
        var grace: Int64 = 0
        /// Whether the others were told its connection was closed by its peer
        /// (`RelayFrame.participantAway`), so that they hear of its resumption too.
        var away = false
        /// The last of its sequence numbers the relay has handled.
        var received: UInt64 = 0
        /// The last of its sequence numbers the relay has acknowledged.
        var acknowledged: UInt64 = 0
        /// The instant on this participant's acknowledgement phase (`AcknowledgementSchedule`)
        /// from which the next quiet acknowledgement is counted.
        var lastAcknowledgement: Int64 = 0
        /// The payload bytes of what it sent since the relay last acknowledged.
        var unacknowledgedBytes = 0
        /// When the relay last acknowledged what it sent, however (`AcknowledgementSchedule`).
        var acknowledgedAt: Int64 = AcknowledgementSchedule.never
        var outbox = RelayOutbox()
        /// The attachment it is uploading, if any.
        var upload: Upload?
        /// Its latest round trip to the relay in nanoseconds, nil until one is measured.
        var roundTrip: Int64?
        /// The attachment loads it asked for, oldest first, sent as its connection drains.
        var loads: [LoadCursor] = []
        /// When its datagram registration was last confirmed, nil while it has none.
        var datagramsConfirmedAt: Int64?
        /// Where its datagrams come from and go to, once confirmed (nil in memory).
        var datagramAddress: SocketAddress?
        /// What it has spent of the session's fan-out lately.
        var fanoutMeter = FanoutMeter()
        /// When its acknowledgements last took frames out of its outbox, nil until they first
        /// do: whether it is still reading, and so worth its senders waiting for.
        var readingAt: Int64?
        /// The order of the first record it proposed, nil until it proposes one: who has been
        /// present longest, as participants judge it too (`RelayCore.isLongerPresent`).
        var firstOrder: UInt64?

        /// Whether the relay owes it an acknowledgement.
        var owesAcknowledgement: Bool { received > acknowledged }

        /// Whether what the relay owes it is to be acknowledged at once (`AcknowledgementSchedule`).
        var acknowledgementIsPressing: Bool {
            AcknowledgementSchedule.isPressing(frames: received &- acknowledged, bytes: unacknowledgedBytes)
        }

        /// When the tick owes it an acknowledgement, if one is owed (`AcknowledgementSchedule.due`).
        func acknowledgementDue(interval: Int64) -> Int64 {
            AcknowledgementSchedule.due(last: lastAcknowledgement, acknowledgedAt: acknowledgedAt, interval: interval)
        }

        /// Counts its frame `sequence`, of `bytes` payload bytes, received at `now`: a frame that
        /// makes an acknowledgement owed starts the wait from its phase instant.
        mutating func receive(_ sequence: UInt64, bytes: Int, at now: Int64, interval: Int64) {
            if !owesAcknowledgement {
                lastAcknowledgement = AcknowledgementSchedule.advance(from: lastAcknowledgement, to: now, interval: interval)
            }
            received = sequence
            unacknowledgedBytes += bytes
        }

        /// Everything it sent counted as acknowledged at `now`, on its phase: the frame that says so.
        mutating func acknowledgeReceived(at now: Int64, interval: Int64) -> RelayFrame {
            acknowledged = received
            unacknowledgedBytes = 0
            acknowledgedAt = now
            lastAcknowledgement = AcknowledgementSchedule.advance(from: lastAcknowledgement, to: now, interval: interval)
            return .ack(received)
        }

        /// The acknowledgement owed it when it is on `connection` and owed one at all: counted
        /// as sent at `now`. Called through the session table it changes the participant in
        /// place, where reading its fields through the table would copy the whole session.
        mutating func acknowledgementIfOwed(on connection: RelayConnectionID, at now: Int64, interval: Int64) -> RelayFrame? {
            guard self.connection == connection, owesAcknowledgement else { return nil }
            return acknowledgeReceived(at: now, interval: interval)
        }

        /// The acknowledgement owed it when it is on `connection` and what is owed is pressing
        /// (`AcknowledgementSchedule`), counted as sent at `now`; in place, as
        /// `acknowledgementIfOwed`.
        mutating func acknowledgementIfPressing(on connection: RelayConnectionID, at now: Int64, interval: Int64) -> RelayFrame? {
            guard self.connection == connection, acknowledgementIsPressing else { return nil }
            return acknowledgeReceived(at: now, interval: interval)
        }

        /// Appends the frame `make` builds to the outbox, in place; what was added to the
        /// outbox's bytes, whether it is now over a cap, and where to send it.
        mutating func append(_ make: (UInt64) -> RelayFrame, maximumFrames: Int, maximumBytes: Int)
            -> (frame: RelayFrame, added: Int, overflowing: Bool, connection: RelayConnectionID?) {
            let before = outbox.bodyBytes
            let frame = outbox.append(make)
            return (frame, outbox.bodyBytes - before, outbox.count > maximumFrames || outbox.bodyBytes > maximumBytes, connection)
        }

        /// How full the outbox is against its caps: the larger of its frames' and its bytes'
        /// share, 1 at a cap.
        func backlog(maximumFrames: Int, maximumBytes: Int) -> Double {
            max(Double(outbox.count) / Double(max(maximumFrames, 1)), Double(outbox.bodyBytes) / Double(max(maximumBytes, 1)))
        }
    }

    /// An attachment load in progress: what is left to send, sent a window at a time.
    struct LoadCursor: Sendable {
        /// The sequence number of the `loadRequest`, which the chunks and the outcome answer.
        var request: UInt64
        /// The attachment's data (shared with the journal, not copied).
        var data: [UInt8]
        /// How much of it has been handed to the shell.
        var offset = 0
    }

    /// An attachment arriving in chunks.
    struct Upload: Sendable {
        /// The sequence number of the `attachmentAdd`, which the outcome answers.
        var request: UInt64
        var entry: RelayAttachmentEntry
        var data: [UInt8]
        /// The bytes reserved against the journal and the relay's budget when it was announced
        /// (its size and metadata), released if it never completes.
        var reserved = 0
        /// Set when the add was refused: chunks are swallowed and the outcome carries this.
        var refusal: RelayFault?
    }

    /// A journal attachment with its data.
    struct Attachment: Sendable {
        var entry: RelayAttachmentEntry
        var data: [UInt8]
    }

    let id: UUID
    /// The verifier joiners' proofs are checked with: the creator's, then each new epoch's
    /// (`RelayCore+Authority.swift`).
    var key: [UInt8]
    let activity: [UInt8]
    /// The public keys of the session's operators as the relay knows them: its creator's, then
    /// as operators' signed statements grant, revoke and claim the role
    /// (`RelayCore+Authority.swift`). Their statements alone move the session to a new epoch.
    var operatorKeys: [[UInt8]] = [] {
        didSet { operatorIDs = Set(operatorKeys.map(RelayAuthenticator.participantID(for:))) }
    }
    /// The identities `operatorKeys` certify, so that asking whether an operator is present
    /// costs a lookup each, not a hash.
    private(set) var operatorIDs: Set<UUID> = []
    /// The keys whose invite tickets admit: every key that has been an operator here, less
    /// those revoked or removed (an operator who left still vouches for the invites it handed
    /// out).
    var ticketKeys: [[UInt8]] = []
    /// The last statement counter taken from each signer, so that a statement seen again
    /// changes nothing.
    var authorityCounters: [[UInt8]: UInt64] = [:]
    /// The session's epoch, as an operator last announced it.
    var epoch: UInt16 = 0
    /// The verifiers of earlier epochs: a participant still present may resume with a proof by
    /// any of them, since it was admitted before the change.
    var formerKeys: [[UInt8]] = []
    /// The participants removed from the session, refused from then on.
    var removed: Set<UUID> = []
    /// Whether only operators may end the session, as an operator's statement last said
    /// (`RelayAuthority.Change.ending`).
    var endingByOperators = false
    /// The operators' keys that the claim the relay took last displaced, and the claimant's: one
    /// of the displaced takes the role back with a reinstatement, ending the claimant's
    /// (`RelayAuthority.Change.reinstate`), as the participants' role book does. Cleared by a
    /// reinstatement; a removal takes its target out.
    var displacedKeys: [[UInt8]] = []
    /// The key of the claimant whose claim the relay took last, while one of those it displaced
    /// may still take the role back.
    var claimantKey: [UInt8]?
    /// Why the relay dropped the participants it dropped lately (too far behind, flooding, a
    /// protocol violation), newest last, at most `RelaySessionState.rememberedDrops`: a
    /// participant that tries to resume after is told why, where a participant it never knew
    /// is told it was gone too long.
    var drops: [(id: UUID, fault: RelayFault)] = []
    /// Whether its invites expire: its creator brought a ticket, and every joiner must bring a
    /// valid one (`InviteTicket`).
    var ticketed = false
    /// Participant identities in the order they joined.
    var order: [UUID] = []
    var participants: [UUID: Participant] = [:]
    /// Attachment identities in the order they were added.
    var attachmentOrder: [UUID] = []
    var attachments: [UUID: Attachment] = [:]
    /// The bytes the journal holds or has reserved: each attachment's size and metadata.
    var journalBytes = 0
    /// The source (`RelaySource.key`) of the connection that created the session: what the cap
    /// on sessions per source and the fair shares of the memory budget count it under.
    var creatorAddress: String?
    /// When a participant last sent something the relay routed (a message, an upload, a
    /// proposal): a session quiet for `RelayCoreConfiguration.idleSessionAge` is idle.
    var lastRouted: Int64 = .min
    /// The fan-out allowance, made on first use.
    var fanout: FanoutBudget?
    /// How full the fullest outbox of a connected recipient still reading was after the
    /// session's last timed fan-out (`Participant.backlog`): what slows the session's senders
    /// down before a reader too slow for them overflows (`RelayCoreConfiguration.backlogHighWater`).
    var backlog: Double = 0
    /// The bytes this session holds that the relay-wide budget counts (journal reservations,
    /// ordered history, outbox bodies).
    var accountedBytes = 0
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
