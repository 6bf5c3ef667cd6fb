import TandemNet
/// What the proxy has seen and done so far.
public struct NetsimStatistics: Sendable, Hashable {
    /// The counters of one direction.
    public struct Flow: Sendable, Hashable, Codable {
        /// Datagrams received for this direction.
        public var datagrams = 0
        /// Their bytes.
        public var datagramBytes = 0
        /// Datagrams delivered.
        public var datagramsDelivered = 0
        /// Datagrams dropped on purpose (`--loss`).
        public var datagramsLost = 0
        /// Datagrams held back on purpose (`--reorder`).
        public var datagramsHeldBack = 0
        /// Datagrams delivered after one that arrived later on the same client's flow
        /// (RFC 4737's reordered packets), whether held back or overtaken through jitter.
        public var datagramsReordered = 0
        /// Datagrams the kernel would not take when due (a full send buffer) or refused.
        public var datagramsFailed = 0
        /// Chunks of TCP streams received.
        public var chunks = 0
        /// Their bytes.
        public var chunkBytes = 0
        /// Bytes of TCP streams handed to the kernel on the other side.
        public var chunkBytesDelivered = 0

        /// Creates zeroed counters.
        public init() {}
    }

    /// Client to target.
    public var up = Flow()
    /// Target to client.
    public var down = Flow()
    /// TCP clients accepted.
    public var connectionsAccepted = 0
    /// TCP clients whose connection to the target failed.
    public var connectionsFailed = 0
    /// UDP clients (distinct addresses) seen.
    public var datagramClients = 0
    /// How late deliveries were against their scheduled instants: the proxy's own added error.
    public var lateness = LatenessHistogram()

    /// Creates zeroed statistics.
    public init() {}

    /// The counters of `direction`.
    public subscript(direction: PathDirection) -> Flow {
        get { direction == .up ? up : down }
        set { if direction == .up { up = newValue } else { down = newValue } }
    }

    /// A few lines for a person: counters per direction, then the proxy's own error.
    public var report: String {
        var lines: [String] = []
        for direction in PathDirection.allCases {
            let flow = self[direction]
            let label = direction == .up ? "up (client→server)" : "down (server→client)"
            lines.append("\(label): UDP \(flow.datagrams) datagrams / \(flow.datagramBytes) bytes in, \(flow.datagramsDelivered) delivered, "
                + "\(flow.datagramsLost) lost, \(flow.datagramsHeldBack) held back, \(flow.datagramsReordered) reordered, \(flow.datagramsFailed) failed; "
                + "TCP \(flow.chunks) chunks / \(flow.chunkBytes) bytes in, \(flow.chunkBytesDelivered) bytes delivered")
        }
        lines.append("clients: \(connectionsAccepted) TCP (\(connectionsFailed) could not reach the target), \(datagramClients) UDP")
        lines.append("own added error (delivery minus scheduled instant): \(lateness.summary)")
        return lines.joined(separator: "\n")
    }
}
