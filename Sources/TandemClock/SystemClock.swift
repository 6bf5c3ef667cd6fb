#if canImport(Glibc)
import Glibc
#endif

/// The machine's `CLOCK_MONOTONIC`, in nanoseconds.
///
/// This is the only place in Tandem that reads the system clock; everything else is handed a
/// `LocalClock`.
public struct SystemClock: LocalClock {
    /// Creates the system clock.
    public init() {}

    /// The current `CLOCK_MONOTONIC` time in nanoseconds.
    public func now() -> Int64 {
        var spec = timespec()
        // CLOCK_MONOTONIC cannot fail on Linux with a valid pointer, so the result is not checked.
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }
}
