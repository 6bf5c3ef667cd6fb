/// How a player that cannot present on an exact schedule (mpv through its IPC, say) is kept on
/// the shared timeline: measure its error, nudge its rate for small errors, seek for large ones.
///
/// Defaults: errors within ±15 ms are left alone; a correction starts beyond ±40 ms and, once
/// started, goes on until the error is back within ±15 ms (hysteresis, so it does not chatter);
/// the rate is nudged by 1 % per 10 ms of error, at most ±5 %, so the correction is inaudible;
/// beyond ±400 ms the player seeks instead.
public struct CorrectionPolicy: Sendable, Equatable {
    /// What to do about a measured error.
    public enum Action: Sendable, Equatable {
        /// Play at the group's rate.
        case none
        /// Play at this rate until told otherwise.
        case nudge(rate: Double)
        /// Seek to this media time (ns).
        case seek(to: Int64)
    }

    /// Errors within this (ns) count as in sync and end a correction.
    public var deadband: Int64 = 15_000_000
    /// Errors beyond this (ns) start a correction.
    public var correctionThreshold: Int64 = 40_000_000
    /// Errors beyond this (ns) are corrected by seeking.
    public var seekThreshold: Int64 = 400_000_000
    /// Rate change per nanosecond of error (1 % per 10 ms).
    public var gain: Double = 0.01 / 10_000_000
    /// The largest rate change, as a fraction of the group's rate.
    public var maximumNudge: Double = 0.05

    /// Whether a correction is under way (the hysteresis state).
    public private(set) var correcting = false

    /// The default policy.
    public init() {}

    /// What to do when the player is at `playerTime` while the timeline says `expectedTime`, at
    /// the group's `rate`. A positive error means the player is ahead.
    public mutating func decide(playerTime: Int64, expectedTime: Int64, rate: Double) -> Action {
        let error = playerTime - expectedTime
        let size = abs(error)
        guard rate > 0 else {
            correcting = false
            return size > deadband ? .seek(to: expectedTime) : .none
        }
        if size > seekThreshold {
            correcting = false
            return .seek(to: expectedTime)
        }
        if size <= deadband || (!correcting && size <= correctionThreshold) {
            correcting = false
            return .none
        }
        correcting = true
        // Ahead: slow down; behind: speed up.
        let nudge = min(maximumNudge, Double(size) * gain)
        return .nudge(rate: rate * (error > 0 ? 1 - nudge : 1 + nudge))
    }
}
