/// The raw monotonic clock (CLOCK_MONOTONIC) in nanoseconds: the local time base of the player,
/// of presentation logs and of every deadline the scheduler sleeps to.
///
/// `HostInstant.now()` is the typed reading; this bare one serves code that still holds host
/// time as `Nanoseconds`.
public enum MonotonicClock {
    /// The current instant.
    public static func now() -> Nanoseconds { HostInstant.now().nanoseconds }
}
