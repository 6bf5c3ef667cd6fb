/// The raw monotonic clock (CLOCK_MONOTONIC) read as bare nanoseconds.
///
/// `HostInstant.now()` is the typed reading of the same clock.
@available(*, deprecated, message: "read HostInstant.now(), a HostInstant; its nanoseconds are .nanoseconds")
public enum MonotonicClock {
    /// The current instant.
    public static func now() -> Int64 { HostInstant.now().nanoseconds }
}
