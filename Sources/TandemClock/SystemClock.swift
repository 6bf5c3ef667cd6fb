/// The machine's `CLOCK_MONOTONIC` as a participant's clock: its local instants are the host's.
///
/// Nothing else in Tandem reads the system clock but `HostInstant.now()`; everything else is
/// handed a `LocalClock`.
public struct SystemClock: LocalClock {
    /// Creates the system clock.
    public init() {}

    /// The current `CLOCK_MONOTONIC` reading.
    public func instant() -> LocalInstant { LocalInstant(nanoseconds: HostInstant.now().nanoseconds) }
}
