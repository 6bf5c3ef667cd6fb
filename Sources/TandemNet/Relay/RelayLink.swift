import Foundation
import TandemWire

// The contract between the sessions layer (the public GroupActivities-style API) and a relay
// transport. Two transports implement it: the real relay over TCP and UDP (`RelayServer`, joined
// through `NetworkRelayConnector`) and an in-memory one (`InMemoryRelay`) that runs the same relay
// core without sockets, so that the same test bodies run against both.
//
// The relay routes by these headers alone. Message bodies, activity descriptions and attachments
// are opaque bytes: the sessions layer seals them with a key that the relay never sees.

/// Who receives a message. The sender never receives its own message.
public enum Recipients: Sendable, Hashable {
    /// Every other participant of the session.
    case everyone
    /// Only these participants (unknown or departed ones are skipped).
    case only(Set<UUID>)
}

/// A participant as the relay knows it.
public struct ParticipantRecord: Sendable, Hashable, Codable {
    /// The participant's identity, stable across reconnections, derived from `publicKey`
    /// (`RelayAuthenticator.participantID(for:)`).
    public var id: UUID
    /// The participant's Ed25519 public key for this session.
    public var publicKey: [UInt8]
    /// The name shown to others (the relay's word; the signed presence has the participant's).
    public var displayName: String
    /// The participant's signed presence, sealed, as the relay keeps it (empty if none).
    public var presence: [UInt8]
    /// Whether the participant has left (a welcome lists former participants too).
    public var departed: Bool

    /// A participant record.
    public init(id: UUID, publicKey: [UInt8], displayName: String, presence: [UInt8] = [], departed: Bool = false) {
        self.id = id
        self.publicKey = publicKey
        self.displayName = displayName
        self.presence = presence
        self.departed = departed
    }

    /// Whether `id` is the identity that `publicKey` certifies.
    public var isSelfCertified: Bool { RelayAuthenticator.isIdentity(id, of: publicKey) }
}

/// An attachment of a session's journal, as the relay keeps it (the data is loaded on demand).
public struct AttachmentRecord: Sendable, Hashable {
    /// The attachment's identity.
    public var id: UUID
    /// Who added it.
    public var owner: UUID
    /// The size of its (sealed) data in bytes.
    public var size: Int
    /// Opaque (sealed) metadata, at most `RelayLimits.maximumMetadata` bytes.
    public var metadata: [UInt8]

    /// An attachment record.
    public init(id: UUID, owner: UUID, size: Int, metadata: [UInt8]) {
        self.id = id
        self.owner = owner
        self.size = size
        self.metadata = metadata
    }
}

/// What a participant asks of the relay to join (or create) a session.
public struct RelayJoinRequest: Sendable {
    /// The session.
    public var sessionID: UUID
    /// The participant joining: its identity is `identity`'s (self-certifying).
    public var participant: ParticipantRecord {
        ParticipantRecord(id: participantID, publicKey: identity.publicKey, displayName: displayName, presence: presence)
    }
    /// The participant's own signing key, fresh for the session: it proves every admission and
    /// resumption of this participant, so that nobody else can take its seat.
    public var identity: SigningKeyPair
    /// The session's signing key, derived from the invite's secret. A creator registers its
    /// public half (the verifier); every joiner signs the relay's challenge with it. Neither the
    /// secret nor this key's secret half ever crosses the wire, and it is not the key that
    /// seals bodies.
    public var sessionKey: SigningKeyPair
    /// The name shown to others.
    public var displayName: String
    /// The participant's signed presence, sealed (at most `RelayWireLimits.maximumPresence`
    /// bytes): the relay keeps it and hands it to everyone, late joiners included.
    public var presence: [UInt8]
    private let participantID: UUID
    /// Whether to create the session if the relay does not have it (the host does).
    public var createIfAbsent: Bool
    /// Opaque (sealed) description of the activity, kept by the relay when it creates the session
    /// and handed to every joiner; ignored otherwise. At most `RelayLimits.maximumMetadata` bytes.
    public var activity: [UInt8]

    /// The invite's ticket (`InviteTicket`), for a session whose invites expire: a creator's
    /// makes the session one, a joiner's must be valid on the relay's clock.
    public var ticket: [UInt8]?

    /// A join request for `displayName` with the participant key `identity` (a fresh one by
    /// default), proven with `sessionKey`.
    public init(sessionID: UUID, displayName: String, identity: SigningKeyPair = SigningKeyPair(),
                sessionKey: SigningKeyPair, createIfAbsent: Bool, activity: [UInt8], presence: [UInt8] = []) {
        self.sessionID = sessionID
        self.presence = presence
        self.identity = identity
        self.sessionKey = sessionKey
        self.displayName = displayName
        participantID = RelayAuthenticator.participantID(for: identity.publicKey)
        self.createIfAbsent = createIfAbsent
        self.activity = activity
    }
}

/// What a participant learns on joining.
public struct RelayWelcome: Sendable {
    /// The session.
    public var sessionID: UUID
    /// Everyone in the session now, this participant included, in the order they joined,
    /// after those who have left (`departed`) but may have signed records it receives.
    public var participants: [ParticipantRecord]
    /// The activity description the creator gave.
    public var activity: [UInt8]
    /// The journal's attachments so far.
    public var attachments: [AttachmentRecord]
    /// Whether this join created the session.
    public var created: Bool
    /// The session's ordered broadcasts so far that the relay kept, in order, so that a late
    /// joiner can replay them; the first `.ordered` event follows the last of them without a gap.
    /// The relay keeps them by their retention: the two newest snapshots, the playback records
    /// after the lower of the orders they reflect, and every other record, all within
    /// `RelayCoreConfiguration.maximumOrderedHistory` records (and
    /// `maximumOrderedHistoryBytes` of bodies), beyond which the older snapshots go, then the
    /// oldest records. So the orders may have gaps, and the first one's may be above 1.
    public var orderedHistory: [OrderedDelivery]
    /// The order of the first record the relay ordered from each participant present that has
    /// proposed one: how long each has been present, also where `orderedHistory` no longer
    /// holds its first record. The relay's word, as its order is.
    public var firstOrders: [UUID: UInt64]

    /// A welcome.
    public init(sessionID: UUID, participants: [ParticipantRecord], activity: [UInt8],
                attachments: [AttachmentRecord], created: Bool, orderedHistory: [OrderedDelivery] = [],
                firstOrders: [UUID: UInt64] = [:]) {
        self.sessionID = sessionID
        self.participants = participants
        self.activity = activity
        self.attachments = attachments
        self.created = created
        self.orderedHistory = orderedHistory
        self.firstOrders = firstOrders
    }
}

/// Something that happened in a joined session, in the order the relay decided it.
public enum RelayEvent: Sendable {
    /// Someone joined.
    case participantJoined(ParticipantRecord)
    /// Someone left, or was gone longer than the relay's grace period.
    case participantLeft(UUID)
    /// Someone's connection was closed by its peer (`away` true): it is gone unless it resumes
    /// within the relay's short grace period; or it resumed (`away` false).
    case participantAway(UUID, away: Bool)
    /// A message for this participant (reliable ones in per-sender order, without loss or
    /// duplicates while connected; unreliable ones at most once).
    case message(from: UUID, body: [UInt8], reliable: Bool)
    /// A broadcast the relay ordered: every participant, the proposer included, receives the
    /// same ones in the same order, without loss or duplicates, across resumptions too.
    case ordered(OrderedDelivery)
    /// An attachment was added to the journal.
    case attachmentAdded(AttachmentRecord)
    /// An attachment was removed from the journal.
    case attachmentRemoved(UUID)
    /// Someone ended the session for everyone; the link is closed after this event.
    case ended(by: UUID, reason: String)
    /// The relay has said nothing for `RelayLinkConfiguration.quietLimit` (a relay that stopped,
    /// a network that went away): the link keeps the connection until its silence limit, then
    /// reconnects. `connectionResumed` follows when the relay is heard again.
    case connectionQuiet
    /// The connection dropped; the link is reconnecting and will resume without loss.
    case connectionInterrupted
    /// The connection is back (or a quiet relay was heard again); nothing was lost.
    case connectionResumed
    /// The relay said it cannot order anything for the session now (`available` false: a relay
    /// of a cluster lost NATS, or the session's stream took nothing of its for a while), or that
    /// it can again (true), with its reason. The link stays up: what is sent meanwhile is held
    /// and takes effect late, in order (`docs/SCALING.md`). Told once a change.
    case relayAvailability(available: Bool, reason: String)
    /// The link is closed for good (gone too long, refused, or the relay went away); last event.
    case failed(RelayError)
}

/// A participant's joined connection to a session on a relay.
public protocol RelayLink: AnyObject, Sendable {
    /// What the participant learned on joining.
    var welcome: RelayWelcome { get }
    /// The session's events, for one consumer; it finishes after `.ended`, `.failed` or `leave()`.
    var events: AsyncStream<RelayEvent> { get }
    /// Queues a message; returns at once. Throws `RelayError.tooLarge` beyond
    /// `RelayLimits.maximumMessageBody` (nothing is sent) and `.closed` once the link is closed.
    func send(_ body: [UInt8], to recipients: Recipients, reliable: Bool) throws(RelayError)
    /// Queues a body for the relay to order and broadcast; returns at once. It comes back to
    /// every participant of the session, this one included, as `.ordered`, in the same order for
    /// all. Throws `RelayError.tooLarge` beyond `RelayLimits.maximumMessageBody` (nothing is sent)
    /// and `.closed` once the link is closed. `retention` tells the relay how long to keep it for
    /// late joiners (see `OrderedRetention`).
    func sendOrdered(_ body: [UInt8], retention: OrderedRetention) throws(RelayError)
    /// Adds an attachment to the journal; returns once the relay holds it.
    func addAttachment(id: UUID, metadata: [UInt8], data: [UInt8]) async throws(RelayError)
    /// Removes an attachment from the journal (any participant may).
    func removeAttachment(id: UUID) async throws(RelayError)
    /// Loads an attachment's data from the relay.
    func loadAttachment(id: UUID) async throws(RelayError) -> [UInt8]
    /// Leaves the session; the others go on.
    func leave() async
    /// Ends the session for everyone, with a reason.
    func end(reason: String) async
}

extension RelayLink {
    /// Queues a body for the relay to order and broadcast, kept for late joiners under the
    /// history's caps (`OrderedRetention.kept`).
    public func sendOrdered(_ body: [UInt8]) throws(RelayError) {
        try sendOrdered(body, retention: .kept)
    }
}

/// Something that joins sessions on a relay: the real one or the in-memory one.
public protocol RelayConnector: Sendable {
    /// Joins (or creates) the session that `request` names.
    func join(_ request: RelayJoinRequest) async throws(RelayError) -> any RelayLink
}

/// The sizes the relay accepts.
public enum RelayLimits {
    /// The largest message body, sealed: 256 KiB of message and room for its sealing.
    public static let maximumMessageBody = 256 * 1024 + 1024
    /// The largest attachment, sealed: 100 MiB of data and room for its sealing.
    public static let maximumAttachment = 100 * 1024 * 1024 + 1024
    /// The largest activity description or attachment metadata, sealed.
    public static let maximumMetadata = 64 * 1024
}
