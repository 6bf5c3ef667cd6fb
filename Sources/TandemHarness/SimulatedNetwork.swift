import TandemNet

/// A deterministic network on virtual time between a client and a server.
///
/// Datagrams sent at a virtual time arrive when the path's `ImpairmentSchedule` says: after a
/// delay drawn from the `Impairment` (the one model the impairment proxy and the in-memory relay
/// use too), or not at all, or twice, or behind later ones. Everything is drawn from one seeded
/// generator, so the same seed and the same sends give the same deliveries.
public struct SimulatedNetwork<Payload: Sendable>: Sendable {
    /// A datagram arriving.
    public struct Delivery: Sendable {
        /// The virtual time of arrival.
        public var time: Int64
        /// Which way it travelled: `.up` from the client to the server, `.down` back.
        public var direction: PathDirection
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

    /// What the path adds, both ways (the asymmetry slows `.down`).
    public var impairment: Impairment { schedule.impairment }
    /// Counters so far.
    public private(set) var statistics = Statistics()
    private var schedule: ImpairmentSchedule
    private var inFlight: [Delivery] = []
    private var sendOrder = 0

    /// Creates a network with the given impairment and seed.
    public init(impairment: Impairment, seed: UInt64) {
        schedule = ImpairmentSchedule(impairment: impairment, seed: seed)
    }

    /// Sends `payload` in `direction` at virtual time `time`.
    public mutating func send(_ payload: Payload, _ direction: PathDirection, at time: Int64) {
        statistics.sent += 1
        let decision = schedule.onDatagram(direction, at: time)
        switch decision {
        case .lose: statistics.lost += 1
        case .deliverTwice: statistics.duplicated += 1
        case .deliver: break
        }
        if decision.heldBack { statistics.reordered += 1 }
        for arrival in decision.deliveries {
            sendOrder += 1
            let delivery = Delivery(time: arrival, direction: direction, payload: payload, order: sendOrder)
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
