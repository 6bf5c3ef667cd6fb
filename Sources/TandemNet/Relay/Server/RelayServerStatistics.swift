/// What a relay server has done so far, and what it holds now.
public struct RelayServerStatistics: Sendable, Hashable, Codable {
    /// TCP connections accepted.
    public var connectionsAccepted = 0
    /// Frames decoded from participants.
    public var framesReceived = 0
    /// Bytes read from participants.
    public var bytesReceived = 0
    /// Connections dropped for malformed or oversized frames.
    public var offendersDropped = 0
    /// Unreliable messages routed.
    public var datagramsRouted = 0
    /// Time probes answered on the shared UDP port.
    public var timeRequestsAnswered = 0
    /// Datagrams ignored: malformed, unknown kinds, unknown tokens.
    public var datagramsIgnored = 0
    /// Times `accept` failed for want of descriptors or memory and the relay backed off.
    public var acceptFailures = 0
    /// Connections closed as they were accepted, their address held off for its strangers'
    /// repeated cuts (`RelayOffenderHoldOff`).
    public var acceptsHeldOff = 0
    /// How many times a source address was held off (again after an earlier hold-off ended).
    public var addressesHeldOff = 0
    /// Sessions open now (as of the latest tick).
    public var sessions = 0
    /// Connections open now.
    public var connections = 0
    /// Connections open now and not yet admitted.
    public var unauthenticatedConnections = 0
    /// The bytes the relay-wide budget counts now (`--memory-limit`).
    public var bytesAccounted = 0
    /// How often each resource limit has refused or cut something.
    public var limits = RelayLimitCounts()
    /// The process's resident memory beyond what it held at the start, when the relay counts
    /// it for admission (`tandem serve`), else 0.
    public var footprintBytes = 0
    /// Flushes large enough to be shared with the second writer thread (`--writer-threads 2`).
    public var sharedFlushes = 0
    /// Connections the second writer thread wrote in those flushes.
    public var sharedWrites = 0

    /// No counts yet.
    public init() {}

    /// One line of counts, as `tandem serve --stats-interval` prints it.
    public var line: String {
        "sessions \(sessions), connections \(connections) (\(unauthenticatedConnections) unauthenticated), "
            + "bytes accounted \(bytesAccounted), footprint \(footprintBytes), frames \(framesReceived), datagrams \(datagramsRouted), "
            + "refusals: memory \(limits.memory), sessions/address \(limits.sessionsPerAddress), "
            + "connections/address \(limits.connectionsPerAddress), unauthenticated \(limits.unauthenticated), "
            + "unauthenticated bytes \(limits.unauthenticatedBytes), journal \(limits.journal), "
            + "output queue \(limits.outputQueue), outbox \(limits.outbox), fan-out pauses \(limits.fanoutPauses), "
            + "forged acks \(limits.forgedAcknowledgements), flooding \(limits.flooding), "
            + "datagram registrations \(limits.datagramRegistrations), proofs/source \(limits.proofs), "
            + "shed \(limits.shed), silent strangers \(limits.silentStrangers), cluster log \(limits.clusterLog), "
            + "accept failures \(acceptFailures), "
            + "accepts held off \(acceptsHeldOff) (\(addressesHeldOff) addresses), "
            + "shared flushes \(sharedFlushes) (\(sharedWrites) by the second writer)"
    }
}
