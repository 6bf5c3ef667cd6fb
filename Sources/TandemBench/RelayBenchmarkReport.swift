/// What `tandem bench relay` measured. Durations are in nanoseconds, memory in bytes.
public struct RelayBenchmarkReport: Sendable, Codable {
    /// Broadcasts from one participant to all the others in one session.
    public struct Broadcast: Sendable, Codable {
        /// Messages sent.
        public var messages: Int
        /// Deliveries expected (messages × other participants).
        public var expected: Int
        /// Deliveries that arrived.
        public var delivered: Int
        /// Send-to-receipt latency over every delivery.
        public var latency: Percentiles?
    }

    /// Many senders at once, as fast as the links take them.
    public struct Throughput: Sendable, Codable {
        /// Messages sent.
        public var messages: Int
        /// Deliveries that arrived.
        public var delivered: Int
        /// From the first send to the last delivery.
        public var seconds: Double
        /// Messages into the relay per second.
        public var messagesPerSecond: Double
        /// Deliveries out of the relay per second.
        public var deliveriesPerSecond: Double
    }

    /// Many sessions of two.
    public struct Pairs: Sendable, Codable {
        /// Sessions.
        public var sessions: Int
        /// Time for the second participant to join its session.
        public var joinLatency: Percentiles?
        /// Messages sent, one way in each session.
        public var messages: Int
        /// Messages that arrived.
        public var delivered: Int
        /// Send-to-receipt latency.
        public var latency: Percentiles?
        /// Messages per second offered (one round of messages per pause).
        public var offeredPerSecond: Double
        /// Messages per second through the relay while all sessions sent.
        public var messagesPerSecond: Double
        /// Resident memory added per participant.
        public var memoryPerParticipant: Double
        /// The same messages offered evenly paced rather than in rounds.
        public var paced: PacedPairs?
    }

    /// Many sessions of two, each message sent at its own instant of an even schedule.
    public struct PacedPairs: Sendable, Codable {
        /// Messages per second offered.
        public var offeredPerSecond: Double
        /// Messages sent, one way, spread over the sessions in turn.
        public var messages: Int
        /// Messages that arrived.
        public var delivered: Int
        /// Send-to-receipt latency.
        public var latency: Percentiles?
        /// How late the pacing thread sent each message after its scheduled instant (latency is
        /// measured from the actual send, so this only says how even the offer was).
        public var senderLateness: Percentiles?
    }

    /// The relay's own delivery, read by lightweight participants on one epoll thread (no link
    /// cores, no event loops of the links, no hop onto the cooperative pool).
    public struct Delivery: Sendable, Codable {
        /// The large session's reliable broadcasts.
        public var reliable: Broadcast
        /// The sessions of two, evenly paced.
        public var paced: PacedPairs
        /// The relay process's CPU seconds over the broadcasts (from `/proc`, user and system:
        /// what the machine's noise does not change much); nil with the relay in this process.
        public var reliableRelayCPUSeconds: Double?
        /// The relay process's CPU seconds over the paced pairs.
        public var pacedRelayCPUSeconds: Double?
        /// The floor under `reliable`, in the same run: the same broadcasts written by one thread
        /// of this process straight to as many loopback readers, with no relay between
        /// (`RelayDeliveryFloor`); nil in reports from before it was measured.
        public var floor: Broadcast?
        /// The relay's own cost by the kernel's timestamps and its thread's CPU time, beside a
        /// bare forwarder's in the same run; nil unless the relay ran in this process.
        public var kernel: KernelTimes?
    }

    /// Participants in the large session.
    public var participants: Int
    /// Reliable broadcasts in the large session.
    public var reliable: Broadcast
    /// Unreliable broadcasts in the large session.
    public var unreliable: Broadcast
    /// Reliable throughput in the large session.
    public var throughput: Throughput
    /// Resident memory added per participant of the large session in this process (the relay's
    /// too when `relayInProcess`).
    public var memoryPerParticipant: Double
    /// The sessions of two.
    public var pairs: Pairs
    /// Whether the relay ran in this process, beside the links (else as `tandem serve`).
    public var relayInProcess: Bool?
    /// The relay's own delivery, before the full-stack phases; nil when not measured.
    public var delivery: Delivery?
    /// How the relay's thread and the probe's threads were scheduled (`ThreadPriority`).
    public var priority: String?
    /// Whether the probe's reader busy-polled; nil when the relay's delivery was not measured.
    public var busyPolling: Bool?
}
