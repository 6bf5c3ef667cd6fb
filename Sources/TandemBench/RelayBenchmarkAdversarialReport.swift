/// What `tandem bench relay --adversarial` measured. Durations in nanoseconds, memory in bytes.
public struct RelayAdversarialReport: Sendable, Codable {
    /// One run of the honest load.
    public struct Run: Sendable, Codable {
        /// Deliveries expected (broadcasts × other participants).
        public var expected: Int
        /// Deliveries that arrived.
        public var delivered: Int
        /// Send-to-receipt latency over every delivery.
        public var latency: Percentiles?
        /// The relay's resident memory at the end of the run (VmRSS).
        public var relayResident: Int
        /// The relay's peak resident memory by the end of the run (VmHWM, and samples of VmRSS).
        public var relayPeak: Int
    }

    /// Honest participants in one session.
    public var participants: Int
    /// Reliable broadcasts in each run.
    public var broadcasts: Int
    /// What the attackers did, as planned.
    public var plan: RelayAttackPlan
    /// The honest load alone.
    public var quiet: Run
    /// The same honest load under attack.
    public var attacked: Run
    /// What the attackers did, and what the relay did to them.
    public var attack: RelayAttackCounts
    /// Whether the relay process still ran after the attack.
    public var relayAliveAfterAttack: Bool
    /// The relay-wide memory budget the issue targets.
    public var memoryBudget: Int

    /// Whether the honest p99 under attack is within twice the quiet p99 (the target).
    public var latencyTargetMet: Bool? {
        guard let quiet = quiet.latency?.p99, let attacked = attacked.latency?.p99 else { return nil }
        return attacked <= 2 * quiet
    }

    /// Whether the relay's peak memory stayed within the budget (the target).
    public var memoryTargetMet: Bool { attacked.relayPeak <= memoryBudget }
}
