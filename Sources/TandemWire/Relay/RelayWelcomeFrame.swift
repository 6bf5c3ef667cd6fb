import Foundation

/// The relay admits a participant: what it needs to start (or to resume).
///
/// The journal's attachments follow as `journalEntry` frames, `attachmentCount` of them, then the
/// session's ordered broadcasts so far as `historyEntry` frames, `orderedHistoryCount` of them,
/// so that a long journal or history never needs one giant frame.
public struct RelayWelcomeFrame: Sendable, Hashable {
    /// The session.
    public var sessionID: UUID
    /// Whether this join created the session.
    public var created: Bool
    /// Whether this connection resumed the participant's earlier one.
    public var resumed: Bool
    /// The last sequence number the relay has received from this participant (0 on a fresh join).
    public var received: UInt64
    /// The secret token that names this participant's datagrams.
    public var token: [UInt8]
    /// The activity description (empty on resume).
    public var activity: [UInt8]
    /// Everyone in the session, in the order they joined (empty on resume).
    public var participants: [RelayParticipantEntry]
    /// How many `journalEntry` frames follow.
    public var attachmentCount: Int
    /// How many `historyEntry` frames follow the journal entries (0 on resume).
    public var orderedHistoryCount: Int
    /// The order of the first record the relay ordered from each participant present that has
    /// proposed one (empty on resume): how long each has been present, for a joiner whose
    /// history the relay cut short, by the rule that chooses who takes the operator's role
    /// when the last operator leaves. The relay's word, as its order is. At most
    /// `RelayWireLimits.maximumParticipants` entries.
    public var firstOrders: [UUID: UInt64]

    /// A welcome.
    public init(sessionID: UUID, created: Bool, resumed: Bool, received: UInt64, token: [UInt8],
                activity: [UInt8], participants: [RelayParticipantEntry], attachmentCount: Int,
                orderedHistoryCount: Int = 0, firstOrders: [UUID: UInt64] = [:]) {
        self.sessionID = sessionID
        self.created = created
        self.resumed = resumed
        self.received = received
        self.token = token
        self.activity = activity
        self.participants = participants
        self.attachmentCount = attachmentCount
        self.orderedHistoryCount = orderedHistoryCount
        self.firstOrders = firstOrders
    }
}
