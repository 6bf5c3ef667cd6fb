/// How a player follows the group's timeline.
public enum TimelineFollowing: String, Sendable, Hashable, CaseIterable {
    /// Every change takes effect at its effective instant of the session clock, mapped to this
    /// participant's clock: the coordinator's way, and the default.
    case scheduled
    /// A benchmarking baseline: each change takes effect when it arrives, on the local clock,
    /// with no clock synchronisation and no scheduling, as most watch-together tools do. A
    /// timeline already in force (joining late, catching up after a stall) is taken up as if the
    /// group reported its position at the instant it arrived: the most favourable case for the
    /// baseline.
    case onReceipt = "on-receipt"
}
