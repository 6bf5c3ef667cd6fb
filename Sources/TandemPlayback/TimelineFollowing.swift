/// How a player follows the group's timeline.
public enum TimelineFollowing: String, Sendable, Hashable, CaseIterable {
    /// Every change takes effect at its effective instant of the session clock, mapped to this
    /// participant's clock: the coordinator's way, and the default.
    case scheduled
    /// A benchmarking baseline: each change takes effect when it arrives, on the local clock,
    /// with no scheduling and no drift correction, as most watch-together tools do.
    ///
    /// - Each change is applied once, when its first command arrives; the commands the
    ///   coordinator re-issues for the same timeline are ignored, except a play command while
    ///   the player is paused (the catch-up after a suspension of this participant's own).
    /// - A fresh change (its effective instant still ahead at receipt) is applied as the command
    ///   carries it, from now: play from its media time at its rate of this participant's own
    ///   clock (whose drift nobody corrects), or pause at it.
    /// - A timeline already in force (joining late, catching up after a stall) is taken up at
    ///   the position it has now (`itemTime − rate × (hostTime − now)`), as if the group reported
    ///   its position at the instant it arrived: the most favourable case for the baseline.
    case onReceipt = "on-receipt"
}
