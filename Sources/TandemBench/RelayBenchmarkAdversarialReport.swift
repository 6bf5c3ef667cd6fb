/// What `tandem bench relay --adversarial` measured. Durations in nanoseconds, memory in bytes.
public struct RelayAdversarialReport: Sendable, Codable {
    /// One run of the honest load: quiet, or under an attack.
    public struct Run: Sendable, Codable {
        /// What ran beside the honest load.
        public var name: String
        /// The attack, nil for the quiet run.
        public var plan: RelayAttackPlan?
        /// Deliveries expected (broadcasts × other participants).
        public var expected: Int
        /// Deliveries that arrived.
        public var delivered: Int
        /// Send-to-receipt latency over every delivery.
        public var latency: Percentiles?
        /// The relay's resident memory when the run began (VmRSS).
        public var relayResidentBefore: Int
        /// The relay's resident memory when the honest load had been delivered (VmRSS).
        public var relayResident: Int
        /// The most resident memory sampled during the run (VmRSS every 50 ms).
        public var relayPeakDuring: Int
        /// The relay's peak resident memory since it started (VmHWM).
        public var relayPeakSoFar: Int
        /// Whether the relay still ran when the honest load had been delivered.
        public var relayAlive: Bool
        /// What the attackers did, and what the relay did to them.
        public var attack: RelayAttackCounts?
        /// Honest sessions created and joined (a create and a join each) after the broadcasts,
        /// while the attack still ran.
        public var admissionsTried = 0
        /// Of those, how many were refused.
        public var admissionsRefused = 0
        /// The relay process's CPU seconds (all its threads, to the nanosecond) from the first
        /// honest broadcast to the last delivery: under attack, serving the attackers included.
        public var relayCPUSeconds: Double?
        /// The attackers' process's CPU seconds over the same stretch.
        public var attackersCPUSeconds: Double?
        /// How the attackers were capped (`RelayAttackerBudget`), or why they were not; nil
        /// for the quiet runs.
        public var attackersCapped: String?
        /// Scheduling periods in which the attackers' cgroup was throttled, over the whole run.
        public var attackersThrottledPeriods: Int?
        /// What the relay forwarded from the first honest broadcast to the last delivery, by the
        /// kernel's clocks (the attackers' records included), with its loop thread's CPU time:
        /// nil unless the relay ran in its measuring mode.
        public var relayKernel: RelayBenchmarkReport.KernelCost?

        /// Microseconds of relay CPU per honest delivery.
        public var relayCPUMicrosecondsPerDelivery: Double? {
            relayCPUSeconds.map { $0 * 1e6 / Double(max(delivered, 1)) }
        }
    }

    /// Honest participants in one session.
    public var participants: Int
    /// Reliable broadcasts in each run.
    public var broadcasts: Int
    /// The whole attack, as planned.
    public var plan: RelayAttackPlan
    /// The quiet run first, then each attack (each kind alone, if asked, then all together).
    public var runs: [Run]
    /// Whether the relay process still ran after the last attack.
    public var relayAliveAfterAttack: Bool
    /// The relay-wide memory budget the issue targets.
    public var memoryBudget: Int
    /// Honest uploads, one at a time, after the attacks: the relay's CPU for each.
    public var uploads: [RelayUploadCost] = []

    /// The quiet run with the lower p99 (one runs before the attacks and one after, and the
    /// machine's own noise moves them): the stricter reference for the target.
    public var quiet: Run? {
        runs.filter { $0.plan == nil }.min { ($0.latency?.p99 ?? .infinity) < ($1.latency?.p99 ?? .infinity) }
    }
    /// The run under every attack at once.
    public var attacked: Run? { runs.last { $0.plan == plan } }

    /// Whether the honest p99 under every attack is within twice the quiet p99 (the target).
    public var latencyTargetMet: Bool? {
        guard let quiet = quiet?.latency?.p99, let attacked = attacked?.latency?.p99 else { return nil }
        return attacked <= 2 * quiet
    }

    /// The relay's arrival → send p99 under every attack against the quiet run's with the lower
    /// one, by the kernel's clocks; nil unless both were measured.
    public var kernelLatencyRatio: Double? {
        let quiet = runs.filter { $0.plan == nil }.compactMap { $0.relayKernel?.toDevice?.p99 }.min()
        guard let quiet, quiet > 0, let attacked = attacked?.relayKernel?.toDevice?.p99 else { return nil }
        return attacked / quiet
    }

    /// Whether the relay's peak memory stayed within the budget (the target).
    public var memoryTargetMet: Bool { runs.allSatisfy { $0.relayPeakSoFar <= memoryBudget } }
}
