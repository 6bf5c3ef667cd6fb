/// How often each of the relay's resource limits has refused or cut something: the counts
/// `tandem serve --stats-interval` prints.
public struct RelayLimitCounts: Sendable, Hashable, Codable {
    /// Sessions, joins and uploads refused at the relay-wide memory budget.
    public var memory = 0
    /// Sessions refused at the cap per source address.
    public var sessionsPerAddress = 0
    /// Connections refused at the cap per source address.
    public var connectionsPerAddress = 0
    /// Connections refused at the cap on connections not yet admitted.
    public var unauthenticated = 0
    /// Connections dropped for buffering more than a stranger may before admission.
    public var unauthenticatedBytes = 0
    /// Uploads refused at the journal's byte cap or its cap on attachments.
    public var journal = 0
    /// Connections dropped for an output queue over its cap (a peer that does not read).
    public var outputQueue = 0
    /// Participants dropped for an outbox over its cap.
    public var outbox = 0
    /// Times a sender was paused at its session's fan-out cap.
    public var fanoutPauses = 0
    /// Connections dropped for acknowledging what the relay never sent.
    public var forgedAcknowledgements = 0
    /// Connections dropped for flooding.
    public var flooding = 0
    /// Datagram registrations refused (wrong address, bad or stale cookie, no live connection).
    public var datagramRegistrations = 0
    /// Admissions refused for more proofs a second from one source than it may have checked.
    public var proofs = 0
    /// Uploads, attachments and idle sessions shed from the largest holders at the memory budget.
    public var shed = 0
    /// Connections closed for sending no hello within `RelayCoreConfiguration.helloTimeout`.
    public var silentStrangers = 0
    /// Senders dropped for a frame over their session's cap in the cluster's log.
    public var clusterLog = 0

    /// No counts yet.
    public init() {}

    /// All counts added up.
    public var total: Int {
        memory + sessionsPerAddress + connectionsPerAddress + unauthenticated + unauthenticatedBytes + journal
            + outputQueue + outbox + fanoutPauses + forgedAcknowledgements + flooding + datagramRegistrations + proofs + shed
            + silentStrangers + clusterLog
    }
}
