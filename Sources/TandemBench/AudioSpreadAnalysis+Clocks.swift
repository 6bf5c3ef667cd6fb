extension AudioSpreadAnalysis {
    /// A window's spread split into what the participants' clocks put there and what their
    /// outputs added. Each participant's audio log says the instant it intended for every media
    /// position, on the machine's clock through its own estimate of the session's clock: where
    /// the members intended the same position at different instants, their clocks disagree, and
    /// no output can play closer than that.
    public struct ClockSplit: Sendable, Equatable {
        /// The latest minus the earliest instant the members intended for the media position the
        /// first member meant to play at the window (ns): the clocks' own spread.
        public var clocks: Double
        /// The latest minus the earliest of each member's lag behind the first member less the
        /// lag of its intention (ns): the spread the outputs added to the clocks'.
        public var outputs: Double
    }

    /// The clocks' part and the outputs' part of a window whose members lag the first member by
    /// `lags` samples (at `sampleRate`), the window reaching the recording at `instant` (the
    /// machine's monotonic ns); `logs` are the members' audio logs, in the members' order. Nil
    /// when a log does not cover the window's media.
    public static func clockSplit(lags: [Double], at instant: Int64, logs: [AudioOutputLog], sampleRate: Double) -> ClockSplit? {
        guard lags.count == logs.count, let first = logs.first, let meant = first.mediaPosition(at: instant) else { return nil }
        var intended: [Int64] = []
        for log in logs {
            guard let instants = log.instants(item: meant.item, media: meant.media, near: instant) else { return nil }
            intended.append(instants.intended)
        }
        let residuals = zip(lags, intended).map { lag, own in lag * 1e9 / sampleRate - Double(own - intended[0]) }
        return ClockSplit(clocks: Double(intended.max()! - intended.min()!), outputs: residuals.max()! - residuals.min()!)
    }

    /// The bound on a group's audio spread p99 (µs): 50 µs, or where the clocks' own spread p99
    /// in the same run is larger than that, 20 µs above it, since no output can undo its clock.
    public static func spreadBound(clocksP99 clocks: Double?) -> Double {
        guard let clocks, clocks > 50 else { return 50 }
        return clocks + 20
    }
}
