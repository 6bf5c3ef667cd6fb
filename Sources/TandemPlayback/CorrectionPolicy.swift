import TandemClock

/// How a player that cannot present on an exact schedule (mpv through its IPC, say) is kept on
/// the shared timeline: measure its error, nudge its rate for small errors, seek for large ones.
///
/// The defaults suit readings precise to well under a millisecond (mpv's audio clock read at the
/// middle of an IPC round trip) and a rate that corrects exactly: errors within ±0.5 ms are left
/// alone; a correction starts beyond ±1.5 ms and, once started, goes on until the error is back
/// within ±0.5 ms (hysteresis, so that it neither chatters at the threshold nor stops just
/// outside it); the rate is nudged by 1 % per 10 ms of error, at most ±5 %, so that an error
/// halves in about 0.7 s and the correction is inaudible (mpv keeps the pitch);
/// beyond ±250 ms the player seeks instead, which costs a moment's still picture but lands
/// exactly. Coarser readings want wider bands: `CorrectionPolicy(deadband: 15 ms,
/// correctionThreshold: 40 ms, ...)` for a position that is only good to half a frame.
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
    public var deadband: Int64
    /// Errors beyond this (ns) start a correction.
    public var correctionThreshold: Int64
    /// Errors beyond this (ns) are corrected by seeking.
    public var seekThreshold: Int64
    /// Rate change per nanosecond of error (1 % per 10 ms by default).
    public var gain: Double
    /// The largest rate change, as a fraction of the group's rate.
    public var maximumNudge: Double

    /// Whether a correction is under way (the hysteresis state).
    public private(set) var correcting = false

    /// A policy with these bounds (ns); the defaults are for readings precise to well under a
    /// millisecond. A `correctionThreshold` under `deadband` is raised to it, and a
    /// `seekThreshold` under the correction threshold likewise.
    public init(deadband: Int64 = 500_000, correctionThreshold: Int64 = 1_500_000, seekThreshold: Int64 = 250_000_000,
                gain: Double = 0.01 / 10_000_000, maximumNudge: Double = 0.05) {
        self.deadband = deadband
        self.correctionThreshold = max(deadband, correctionThreshold)
        self.seekThreshold = max(self.correctionThreshold, seekThreshold)
        self.gain = gain
        self.maximumNudge = maximumNudge
    }

    /// Forgets any correction under way: the player was just lined up afresh (a start, a seek).
    /// `correcting`: the next decision corrects any error beyond the deadband, not only one
    /// beyond the threshold, as after a start that should have landed on the timeline: whatever
    /// error remains is the start's own, not drift or a reading's noise.
    public mutating func reset(correcting: Bool = false) {
        self.correcting = correcting
    }

    /// What to do when the player is at `playerTime` while the timeline says `expectedTime`, at
    /// the group's `rate`. A positive error means the player is ahead.
    public mutating func decide(playerTime: Int64, expectedTime: Int64, rate: Double) -> Action {
        let error = playerTime.saturatingSubtracting(expectedTime)
        let size = playerTime.saturatingDistance(to: expectedTime)
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
