/// What a relay server has done so far.
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

    /// No counts yet.
    public init() {}
}
