import TandemClock
import TandemNet

extension RelayBenchmarkReport {
    /// One forwarder's cost over one phase, by the kernel's clocks and its thread's CPU time: the
    /// relay in its measuring mode, or the bare forwarder beside it (`RelayDeliveryForwarder`).
    public struct KernelCost: Sendable, Codable {
        /// Records that arrived with a receive stamp and were forwarded.
        public var records: Int
        /// Copies queued for recipients.
        public var copies: Int
        /// Copies with no transmit stamp found.
        public var unmatched: Int
        /// Arrival to each copy entering the packet scheduler, in nanoseconds.
        public var toScheduler: Percentiles?
        /// Arrival to each copy leaving through the device (on loopback, delivered).
        public var toDevice: Percentiles?
        /// Arrival to a record's last copy leaving through the device.
        public var lastToDevice: Percentiles?
        /// The forwarding thread's CPU seconds over the phase, reading error queues left out.
        public var cpuSeconds: Double?
        /// Its CPU seconds reading error queues (the measuring's own cost).
        public var drainSeconds: Double?
        /// Frames of every kind queued for the phase's copies and beside them (acknowledgements,
        /// pongs); nil where not counted. The forwarder writes copies only.
        public var frames: Int?
        /// Writes that carried bytes (transmit stamps at the device).
        public var writes: Int?
        /// Deliveries the recipients read in the phase.
        public var delivered: Int
        /// What the recipients saw, send to receipt, in nanoseconds.
        public var clients: Percentiles?

        /// Microseconds of forwarding CPU per delivery read.
        public var cpuMicrosecondsPerDelivery: Double? {
            cpuSeconds.map { $0 * 1e6 / Double(max(delivered, 1)) }
        }

        /// The figures of `ledger`, with the CPU time of the phase.
        init(ledger: RelayTimestampLedger, cpu: TimeSpan?, drain: TimeSpan?, frames: Int?, delivered: Int, clients: [Double]) {
            let scheduled = ledger.delays(to: .scheduled)
            let sent = ledger.delays(to: .sent)
            let nanoseconds = { (spans: [TimeSpan]) in Percentiles(spans.map { Double($0.nanoseconds) }) }
            records = ledger.records
            copies = ledger.copies
            unmatched = sent.unmatched
            toScheduler = nanoseconds(scheduled.perSend)
            toDevice = nanoseconds(sent.perSend)
            lastToDevice = nanoseconds(sent.lastSend)
            cpuSeconds = cpu?.seconds
            drainSeconds = drain?.seconds
            self.frames = frames
            writes = ledger.stampCount(.sent)
            self.delivered = delivered
            self.clients = Percentiles(clients)
        }
    }

    /// The relay's own cost beside the bare forwarder's, by the kernel's clocks, in one run.
    public struct KernelTimes: Sendable, Codable {
        /// The processor the relay's loop and the forwarder were pinned to; nil when not pinned.
        public var cpu: Int?
        /// The relay over the large session's broadcasts.
        public var broadcast: KernelCost
        /// The forwarder over the same broadcasts.
        public var broadcastForwarder: KernelCost
        /// The relay over the sessions of two, evenly paced.
        public var paced: KernelCost
        /// The forwarder over the same messages, sender by sender.
        public var pacedForwarder: KernelCost
    }
}
