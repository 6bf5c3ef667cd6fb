import TandemClock
import TandemNet
import TandemWire

/// A participant synchronizing to a time service across a `SimulatedNetwork`, on virtual time.
///
/// The virtual time is the session clock: the service stamps with it directly. The participant's
/// local clock runs off it by an injected offset and drift (`SkewedClock`). The participant runs
/// the real `ClockPollingPolicy` and `SessionClock`, and the datagrams are the real wire encoding,
/// so only the sockets and the passage of time are simulated.
public struct ClockSyncSimulation: Sendable {
    /// Everything that defines a run.
    public struct Setup: Sendable, Hashable, Codable {
        /// What the path adds both ways; its asymmetry slows the service-to-client leg.
        public var impairment: Impairment
        /// The participant's local clock minus session time at the start, in nanoseconds.
        public var clientOffset: Int64
        /// How fast the participant's clock runs against the session clock, in ppm.
        public var clientDriftPPM: Double
        /// How long the service takes between stamping receipt and stamping its reply.
        public var serviceTurnaround: Int64
        /// The network's seed.
        public var seed: UInt64
        /// The polling policy's configuration.
        public var policy: ClockPollingPolicy.Configuration
        /// The participant's session-clock configuration.
        public var sessionClock: SessionClock.Configuration

        /// Creates a setup; by default a service that answers in 20 µs and default tuning.
        public init(impairment: Impairment, clientOffset: Int64, clientDriftPPM: Double,
                    serviceTurnaround: Int64 = 20_000, seed: UInt64,
                    policy: ClockPollingPolicy.Configuration = ClockPollingPolicy.Configuration(),
                    sessionClock: SessionClock.Configuration = SessionClock.Configuration()) {
            self.impairment = impairment
            self.clientOffset = clientOffset
            self.clientDriftPPM = clientDriftPPM
            self.serviceTurnaround = serviceTurnaround
            self.seed = seed
            self.policy = policy
            self.sessionClock = sessionClock
        }
    }

    /// What happens during a run, in virtual-time order.
    public enum Event: Sendable {
        /// A reply became a sample, applied at local time `localTime`.
        case sample(ClockSample, verdict: ClockEstimator.Verdict, localTime: Int64)
        /// An evaluation instant: the true session time and the participant's local time.
        case evaluation(sessionTime: Int64, localTime: Int64)
    }

    /// The setup of this run.
    public let setup: Setup
    /// The participant's clock, mapping virtual (session) time to local time and back.
    public let clientClock: SkewedClock<VirtualClock>
    /// The participant's session clock as it stands.
    public private(set) var sessionClock: SessionClock
    /// The participant's polling policy as it stands.
    public private(set) var policy: ClockPollingPolicy
    /// The network as it stands.
    public private(set) var network: SimulatedNetwork<[UInt8]>
    /// The current virtual (session) time.
    public private(set) var time: Int64 = 0

    /// Creates a run starting at virtual time zero.
    public init(setup: Setup) {
        self.setup = setup
        clientClock = SkewedClock(base: VirtualClock(), offset: setup.clientOffset, driftPPM: setup.clientDriftPPM)
        sessionClock = SessionClock(configuration: setup.sessionClock)
        policy = ClockPollingPolicy(configuration: setup.policy, startTime: clientClock.localTime(atBase: 0))
        network = SimulatedNetwork(impairment: setup.impairment, seed: setup.seed)
    }

    /// The participant's local time at the current virtual time.
    public var localTime: Int64 { clientClock.localTime(atBase: time) }

    /// Runs until virtual time `end`, reporting each sample and an evaluation every
    /// `evaluationInterval` nanoseconds to `observe`.
    public mutating func run(until end: Int64, evaluationInterval: Int64, observe: (Event) -> Void) {
        var nextEvaluation = time + evaluationInterval
        var earliestProbe = time
        while time < end {
            // One nanosecond late, so that rounding in the clock's inverse never leaves the probe
            // a nanosecond short of due.
            let probeTime = max(clientClock.baseTime(atLocal: policy.nextProbeTime) + 1, earliestProbe, time)
            let deliveryTime = network.nextDeliveryTime ?? .max
            let next = min(probeTime, deliveryTime, nextEvaluation, end)
            time = next
            if let delivery = network.deliver(notAfter: time) {
                handle(delivery, observe: observe)
            } else if time == probeTime {
                if !sendProbe() { earliestProbe = time + 1 }
            } else if time == nextEvaluation {
                observe(.evaluation(sessionTime: time, localTime: localTime))
                nextEvaluation += evaluationInterval
            }
        }
    }

    private mutating func sendProbe() -> Bool {
        let now = localTime
        guard let probe = policy.probe(now: now, sessionClock: sessionClock) else { return false }
        network.send(TimeDatagram.request(probe).encoded(), .up, at: time)
        return true
    }

    private mutating func handle(_ delivery: SimulatedNetwork<[UInt8]>.Delivery, observe: (Event) -> Void) {
        guard let datagram = try? TimeDatagram.decode(delivery.payload) else { return }
        switch (delivery.direction, datagram) {
        case let (.up, .request(probe)):
            // The service stamps receipt now and its reply after its turnaround.
            let sendTime = time + setup.serviceTurnaround
            let reply = TimeReply(probe: probe, serverReceiveTime: time, serverSendTime: sendTime)
            network.send(TimeDatagram.reply(reply).encoded(), .down, at: sendTime)
        case let (.down, .reply(reply)):
            let now = localTime
            let outcome = policy.onReply(
                sequence: reply.probe.sequence, echoedSendTime: reply.probe.sendTime,
                serverReceiveTime: reply.serverReceiveTime, serverSendTime: reply.serverSendTime, receiveTime: now
            )
            guard case let .sample(sample) = outcome else { return }
            let verdict = sessionClock.onSample(sample, now: LocalInstant(nanoseconds: now))
            observe(.sample(sample, verdict: verdict, localTime: now))
        default:
            return
        }
    }
}
