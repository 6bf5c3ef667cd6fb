#if canImport(Glibc)
import Glibc
#endif

extension TimePoint where Kind == HostTimeKind {
    /// The host's raw monotonic clock (`CLOCK_MONOTONIC`) now: the one place Tandem reads the
    /// system clock. Everything else is handed a `LocalClock`, or this instant by its caller.
    public static func now() -> HostInstant {
        var spec = timespec()
        // CLOCK_MONOTONIC cannot fail on Linux with a valid pointer, so the result is not checked.
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return HostInstant(nanoseconds: Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec))
    }
}
