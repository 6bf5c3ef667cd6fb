import Foundation

/// The first frame a participant sends on a new connection: who it is and what it wants.
public struct RelayHello: Sendable, Hashable {
    /// The session to join.
    public var sessionID: UUID
    /// The participant joining.
    public var participant: RelayParticipantEntry
    /// Whether to create the session if the relay does not have it.
    public var create: Bool
    /// The opaque activity description, kept when this hello creates the session.
    public var activity: [UInt8]
    /// Whether this connection resumes an earlier one of the same participant.
    public var resume: Bool
    /// On resume: the last relay sequence number the participant has received.
    public var received: UInt64
    /// A creator's proof that it holds the relay's creation key (`RelayWireLimits.creationProofLength`
    /// bytes), for a relay that creates sessions only for its own host; nil otherwise.
    ///
    /// On the wire it follows the other fields only when present, so that a hello without it is
    /// byte for byte the one every relay of this version reads.
    public var creationProof: [UInt8]?
    /// The invite's ticket (`RelayWireLimits.inviteTicketLength` bytes: its expiry and the
    /// creator's signature), for a session whose invites expire; nil otherwise. A creator's
    /// ticket makes the session one whose joiners must each bring one. On the wire it follows
    /// the creation proof, when present.
    public var ticket: [UInt8]?

    /// A hello.
    public init(sessionID: UUID, participant: RelayParticipantEntry, create: Bool, activity: [UInt8],
                resume: Bool, received: UInt64, creationProof: [UInt8]? = nil, ticket: [UInt8]? = nil) {
        self.sessionID = sessionID
        self.participant = participant
        self.create = create
        self.activity = activity
        self.resume = resume
        self.received = received
        self.creationProof = creationProof
        self.ticket = ticket
    }
}
