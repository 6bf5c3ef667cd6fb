/// A deterministic network on virtual time between a client and a server.
///
/// Datagrams sent at a virtual time arrive after a delay drawn from their direction's profile, or
/// not at all, or twice, or behind later ones. Everything is drawn from one seeded generator, so
/// the same seed and the same sends give the same deliveries.
public struct SimulatedNetwork<Payload: Sendable>: Sendable {
    /// Which way a datagram travels.
    public enum Direction: Sendable, Hashable {
        /// From the client to the server.
        case upstream
        /// From the server to the client.
        case downstream
    }

    /// A datagram arriving.
    public struct Delivery: Sendable {
        /// The virtual time of arrival.
        public var time: Int64
        /// Which way it travelled.
        public var direction: Direction
        /// What it carries.
        public var payload: Payload
        /// Breaks ties in arrival time by order of sending, so that runs repeat exactly.
        fileprivate var order: Int
    }

    /// Counters for reports.
    public struct Statistics: Sendable, Hashable {
        /// Datagrams handed to the network.
        public var sent = 0
        /// Datagrams it lost.
        public var lost = 0
        /// Extra copies it delivered.
        public var duplicated = 0
        /// Datagrams it held back for reordering.
        public var reordered = 0
    }

    /// The client-to-server impairments.
    public let upstream: LinkProfile
    /// The server-to-client impairments.
    public let downstream: LinkProfile
    /// Counters so far.
    public private(set) var statistics = Statistics()
    private var random: SeededRandom
    private var inFlight: [Delivery] = []
    private var sendOrder = 0

    /// Creates a network with the given impairments and seed.
    public init(upstream: LinkProfile, downstream: LinkProfile, seed: UInt64) {
        self.upstream = upstream
        self.downstream = downstream
        random = SeededRandom(seed: seed)
    }

    /// Sends `payload` in `direction` at virtual time `time`.
    public mutating func send(_ payload: Payload, _ direction: Direction, at time: Int64) {
        let profile = direction == .upstream ? upstream : downstream
        statistics.sent += 1
        guard random.unit() >= profile.lossProbability else {
            statistics.lost += 1
            return
        }
        let copies = random.unit() < profile.duplicationProbability ? 2 : 1
        statistics.duplicated += copies - 1
        for _ in 0..<copies {
            var delay = profile.delay.sample(using: &random)
            if random.unit() < profile.reorderProbability {
                delay += profile.reorderDelay
                statistics.reordered += 1
            }
            sendOrder += 1
            let delivery = Delivery(time: time + delay, direction: direction, payload: payload, order: sendOrder)
            let index = inFlight.firstIndex { ($0.time, $0.order) > (delivery.time, delivery.order) } ?? inFlight.endIndex
            inFlight.insert(delivery, at: index)
        }
    }

    /// The virtual time of the next arrival, if anything is in flight.
    public var nextDeliveryTime: Int64? { inFlight.first?.time }

    /// Removes and returns the next arrival if it happens no later than `time`.
    public mutating func deliver(notAfter time: Int64) -> Delivery? {
        guard let first = inFlight.first, first.time <= time else { return nil }
        return inFlight.removeFirst()
    }
}
