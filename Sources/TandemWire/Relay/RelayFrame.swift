import Foundation

/// One frame on a relay's TCP connection.
///
/// On the wire: a 4-byte big-endian length of what follows (at most
/// `RelayWireLimits.maximumFrameLength`), the version byte, the type byte, then the fields. The
/// relay routes on these fields alone; bodies, descriptions, metadata and attachment data are
/// opaque bytes that the sessions layer may seal.
///
/// Reliability: every frame a participant sends after joining carries its own sequence number
/// (1, 2, 3, ...), and every frame the relay sends a participant after the welcome carries the
/// relay's sequence number for that participant. Each side acknowledges what it has handled with
/// `ack`, keeps what is unacknowledged, and after a reconnection sends again what the other side
/// lacks; a receiver drops anything it has already seen.
public enum RelayFrame: Sendable, Hashable {
    /// The oldest version whose `refusal` this build can write (see `versionRefusal`).
    public static let oldestRefusableVersion: UInt8 = 2

    /// The version this build writes and reads.
    ///
    /// Version 2 added ordered broadcasts: `proposal`, `ordered`, `historyEntry` and the welcome's
    /// `orderedHistoryCount`. Version 3 added participants' signing keys (in the hello, the
    /// welcome's participants and `participantJoined`), proofs by signature against a verifier
    /// (`proof`, `claim`) and resumption proven with the participant's own key. Version 4 added
    /// the retention of ordered records (`OrderedRetention` in proposals and ordered entries).
    /// Version 5 added the `recent` retention (chat lines, the newest kept for late joiners).
    /// Version 6 added `participantAway` (a participant's connection closed by its peer, and its
    /// resumption), which a version 5 peer could not read: it is refused at the hello instead.
    /// Version 7 added `notice` (a relay of a cluster saying that it cannot order anything now,
    /// and that it can again). Version 8 added `epoch` (an operator's move of the session to a new
    /// key, and whom it removes) and the epoch byte in front of every sealed body, which a
    /// version 7 participant could not open: it is refused at the hello instead. Version 9
    /// replaced `epoch` with `authority` (an operator's statement with a signature of its own,
    /// which any operator sends) and added an invite ticket's lifetime. Version 10 puts the
    /// maker's statement inside each role record the relay mirrors, for every participant that
    /// accepts the record to hand on, and adds to the welcome when each participant present
    /// first proposed; a version 9 participant would take such a record for a malformed one: it
    /// is refused at the hello instead. Version 11 added the operators' statement of who may end
    /// the session. Version 12 added `authoredProposal` (a role record handed to the relay with
    /// its maker's statement, which the relay takes at once and by which it keeps the record
    /// apart from the history's caps), the statements of a reinstatement and of an epoch
    /// history, and widened the epoch to two bytes (in statements, role records and in front of
    /// every sealed body): a version 11 participant is refused at the hello instead. Version 13
    /// puts the writer's chain head over the session's order in front of every snapshot's state,
    /// inside the seal, and health reports carry chain heads rather than window digests: a
    /// version 12 participant would take every snapshot for a malformed one, and is refused at
    /// the hello instead.
    ///
    /// The length prefix, the version byte, the type byte and the layout of `refusal` and
    /// `error` stay the same across versions, so that a relay can refuse a peer of another
    /// version in a frame that peer reads.
    public static let version: UInt8 = 13

    // Handshake.

    /// Participant → relay: who joins which session.
    case hello(RelayHello)
    /// Relay → participant: prove you hold the session's secret and your own key by signing this
    /// nonce; says whether the session exists (if not, a creator answers with `claim`).
    case challenge(nonce: [UInt8], sessionExists: Bool)
    /// Participant → relay: the challenge (`RelayAuthenticator.challengeMessage`) signed with the
    /// session's key (derived from the secret; the relay checks it with the session's verifier)
    /// and with the participant's own key (checked with the hello's public key). A resumption
    /// is proven by the second: nobody else holds it.
    case proof(sessionSignature: [UInt8], participantSignature: [UInt8])
    /// Participant → relay: create the session with this verifier (the public half of the
    /// session's key), with the same two signatures as a proof (only a creator, and only when
    /// the relay said the session does not exist).
    case claim(verifier: [UInt8], sessionSignature: [UInt8], participantSignature: [UInt8])
    /// Relay → participant: admitted.
    case welcome(RelayWelcomeFrame)
    /// Relay → participant: one journal entry following a welcome.
    case journalEntry(RelayAttachmentEntry)
    /// Relay → participant: not admitted; the relay closes the connection after it.
    case refusal(RelayFault)
    /// Relay → participant: a refusal of a hello in protocol version `peerVersion`, written with
    /// that version's byte so that the other side reads it (the layout of `refusal` is the same
    /// in every version since 2). It decodes as `refusal` on that side.
    case versionRefusal(peerVersion: UInt8, RelayFault)
    /// Relay → participant: one of the session's ordered broadcasts so far, following a welcome
    /// and its journal entries, oldest first.
    case historyEntry(RelayOrderedEntry)

    // Participant → relay, each with the participant's sequence number.

    /// A message for some or all of the others (an unreliable one too large for a datagram
    /// travels here with `reliable` false).
    case message(sequence: UInt64, recipients: RelayRecipientList, reliable: Bool, body: [UInt8])
    /// Starts adding an attachment of `entry.size` bytes; its data follows in `attachmentChunk`s.
    case attachmentAdd(sequence: UInt64, entry: RelayAttachmentEntry)
    /// The next piece of an attachment's data, at most `RelayWireLimits.attachmentChunkSize`.
    case attachmentChunk(sequence: UInt64, id: UUID, data: ArraySlice<UInt8>)
    /// Removes an attachment.
    case attachmentRemove(sequence: UInt64, id: UUID)
    /// Asks for an attachment's data; it comes back as `loadChunk`s, then an `outcome`.
    case loadRequest(sequence: UInt64, id: UUID)
    /// Leaves the session.
    case leave(sequence: UInt64)
    /// Ends the session for everyone.
    case end(sequence: UInt64, reason: String)
    /// A body for the relay to order and broadcast to everyone in the session, the sender included,
    /// with how long the relay keeps it for late joiners (a snapshot must reflect an order below
    /// the one it gets, or the relay drops the connection as a protocol violation).
    case proposal(sequence: UInt64, retention: OrderedRetention = .kept, body: [UInt8])
    /// An operator's signed statement (`RelayAuthority`): a grant or revocation of the operator
    /// role, a claim of it, or a move of the session to a new epoch (the new verifier, and whom it
    /// removes). The relay checks its signature against the operator keys it keeps for the
    /// session, whichever connection it came on.
    case authority(sequence: UInt64, RelayAuthority)
    /// A role record for the relay to order, kept for late joiners, with its maker's signed
    /// statement of the change (`RelayAuthority`): the relay takes the statement as it takes an
    /// `authority` frame's, at the record's order, and keeps a record whose statement it took
    /// apart from the history's caps (`RelayOrderedHistory`), so that every late joiner replays
    /// it. A statement it does not take leaves the record an ordinary kept one.
    case authoredProposal(sequence: UInt64, statement: RelayAuthority, body: [UInt8])

    // Relay → participant, each with the relay's sequence number for that participant.

    /// Someone joined.
    case participantJoined(sequence: UInt64, participant: RelayParticipantEntry)
    /// Someone left or was removed.
    case participantLeft(sequence: UInt64, id: UUID)
    /// Someone's connection was closed by its peer (`away` true: it has the short grace period to
    /// resume before it is removed), or it resumed (`away` false).
    case participantAway(sequence: UInt64, id: UUID, away: Bool)
    /// A message from `sender` (the relay's word; the signed body names its signer).
    case delivery(sequence: UInt64, sender: UUID, reliable: Bool, body: [UInt8])
    /// An attachment was added (sent to everyone, its owner included).
    case attachmentAdded(sequence: UInt64, entry: RelayAttachmentEntry)
    /// An attachment was removed (sent to everyone, the remover included).
    case attachmentRemoved(sequence: UInt64, id: UUID)
    /// A piece of the data a `loadRequest` (named by its sequence number) asked for.
    case loadChunk(sequence: UInt64, request: UInt64, data: ArraySlice<UInt8>)
    /// The request with sequence number `request` is done: nil fault means it succeeded.
    case outcome(sequence: UInt64, request: UInt64, fault: RelayFault?)
    /// The session was ended by `by`; the relay closes the connection after it.
    case ended(sequence: UInt64, by: UUID, reason: String)
    /// A broadcast the relay ordered (sent to everyone, its proposer included).
    case ordered(sequence: UInt64, entry: RelayOrderedEntry)

    // Either direction, outside the sequence.

    /// Everything up to and including this sequence number has been handled.
    case ack(UInt64)
    /// Are you there?
    case ping(UInt64)
    /// Yes: the ping's number echoed.
    case pong(UInt64)
    /// Relay → participant: a fatal error; the relay closes the connection after it.
    case error(RelayFault)
    /// Relay → participant: a notice outside the sequence (`RelayNotice`), such as the relay's
    /// cluster being unavailable and back; nothing is closed.
    case notice(RelayNotice)

    /// The sequence number of a sequenced frame, nil for handshake and control frames.
    public var sequence: UInt64? {
        switch self {
        case let .message(sequence, _, _, _), let .attachmentAdd(sequence, _),
             let .attachmentChunk(sequence, _, _), let .attachmentRemove(sequence, _),
             let .loadRequest(sequence, _), let .leave(sequence), let .end(sequence, _),
             let .participantJoined(sequence, _), let .participantLeft(sequence, _), let .participantAway(sequence, _, _),
             let .delivery(sequence, _, _, _), let .attachmentAdded(sequence, _),
             let .attachmentRemoved(sequence, _), let .loadChunk(sequence, _, _),
             let .outcome(sequence, _, _), let .ended(sequence, _, _),
             let .proposal(sequence, _, _), let .ordered(sequence, _), let .authority(sequence, _),
             let .authoredProposal(sequence, _, _):
            sequence
        case .hello, .challenge, .proof, .claim, .welcome, .journalEntry, .historyEntry, .refusal, .versionRefusal,
             .ack, .ping, .pong, .error, .notice:
            nil
        }
    }

    /// The frame's payload size in bytes that matter for rate limits and memory bounds.
    public var payloadSize: Int {
        switch self {
        case let .message(_, _, _, body), let .delivery(_, _, _, body), let .proposal(_, _, body): body.count
        case let .authoredProposal(_, _, body): body.count + RelayAuthority.maximumLength
        case let .ordered(_, entry), let .historyEntry(entry): entry.body.count
        case let .attachmentChunk(_, _, data), let .loadChunk(_, _, data): data.count
        case let .hello(hello): hello.activity.count
        case let .welcome(welcome): welcome.activity.count
        case let .attachmentAdd(_, entry), let .attachmentAdded(_, entry), let .journalEntry(entry): entry.metadata.count
        default: 0
        }
    }
}
