import TandemClock

/// The arithmetic of the machine's decisions, as pure functions that `MpvPlayer` uses too: where
/// mpv will be once a change of speed has played out, when a start lined up on a frame unpauses,
/// what a landing and a start teach, and the pulse of speed that trims a start's error.
extension MpvMachine {
    /// Where mpv, read at `position` while it plays at `speed` and the group at `rate`, will be
    /// once the sound already in its output (`outputLag` of it, none without sound) has played at
    /// the old speed: a change of speed steps mpv's audio clock by −`outputLag` × the change at
    /// once, and back when the speed is restored.
    public static func settledPosition(_ position: ItemTime, speed: Double, rate: Double, outputLag: TimeSpan) -> ItemTime {
        position + outputLag * (speed - rate)
    }

    /// The instant the timeline (`itemTime` at `host`, at `rate`) reaches the frame `landed`.
    public static func startInstant(landed: ItemTime, itemTime: ItemTime, host: HostInstant, rate: Double) -> HostInstant {
        host + (landed - itemTime) / rate
    }

    /// When a start at `startAt` unpauses mpv: its start `latency` early, and a frame more where
    /// mpv has no audio clock on the frame it landed on (`clockless`).
    public static func unpauseInstant(startAt: HostInstant, latency: TimeSpan, clockless: Bool, frameDuration: TimeSpan) -> HostInstant {
        startAt - (latency + (clockless ? frameDuration : .zero))
    }

    /// The landing time a start aims ahead by, after a landing that `took` (at most a second of
    /// it counts): a slower landing is followed at once, a quicker one an eighth of the way.
    public static func learnedSeekLead(_ lead: TimeSpan, took: TimeSpan) -> TimeSpan {
        let took = min(took, .seconds(1))
        return took > lead ? took : TimeSpan(nanoseconds: lead.nanoseconds.saturatingScaled(by: 7).saturatingAdding(took.nanoseconds) / 8)
    }

    /// What a reading of mpv at `position` at `at`, after a start lined up on `landed` for
    /// `startAt` and unpaused at `unpausedAt`, at `rate`, shows: the start's error (positive:
    /// ahead) and how long after the unpause mpv's position began to move (within −5 to 50 ms).
    public static func startMeasurement(position: ItemTime, at: HostInstant, landed: ItemTime, startAt: HostInstant,
                                        unpausedAt: HostInstant, rate: Double) -> (error: TimeSpan, latency: TimeSpan) {
        let error = position - (landed + (at - startAt) * rate)
        let began = at - (position - landed) / rate
        return (error, TimeSpan(nanoseconds: (began - unpausedAt).nanoseconds.clamped(to: -5_000_000...50_000_000)))
    }

    /// The speed of the pulse, `duration` long, that takes a start's `error` (positive: ahead)
    /// out at `rate`: faster or slower by |error| / (rate × duration). nil when there is nothing
    /// to trim (within `deadband`) or too much (beyond `limit`: a start afresh, or the corrections).
    public static func trimSpeed(error: TimeSpan, rate: Double, deadband: TimeSpan, limit: TimeSpan, duration: TimeSpan) -> Double? {
        let size = error.magnitude
        guard size > deadband, size <= limit else { return nil }
        let change = Double(size.nanoseconds) / (rate * Double(duration.nanoseconds))
        return rate * (error.nanoseconds > 0 ? 1 - change : 1 + change)
    }

    /// The output lag a change of speed from `old` to `new` at `changedAt` shows, from a reading
    /// just before it and one just after: where mpv would be had the change taken effect at once,
    /// less where it is, per unit of change; nil when the readings show no lag of 0 to 1 s.
    public static func learnedLag(before: ItemTime, at beforeAt: HostInstant, after: ItemTime, at afterAt: HostInstant,
                                  changedAt: HostInstant, old: Double, new: Double) -> TimeSpan? {
        let unstepped = before + TimeSpan(nanoseconds: Int64(saturating: Double((changedAt - beforeAt).nanoseconds) * old
                                                             + Double((afterAt - changedAt).nanoseconds) * new))
        let lag = (unstepped - after) / (new - old)
        return (TimeSpan.zero...TimeSpan.seconds(1)).contains(lag) ? lag : nil
    }
}
