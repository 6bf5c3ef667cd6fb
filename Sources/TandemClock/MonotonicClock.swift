#if canImport(Glibc)
import Glibc
#endif

/// The raw monotonic clock (CLOCK_MONOTONIC) in nanoseconds: the local time base of the player,
/// of presentation logs and of every deadline the scheduler sleeps to.
public enum MonotonicClock {
    /// The current instant.
    public static func now() -> Nanoseconds {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Nanoseconds(spec.tv_sec) * 1_000_000_000 + Nanoseconds(spec.tv_nsec)
    }
}
