import Synchronization
import TandemClock

/// A clock that moves only when told to: virtual time for deterministic tests.
public final class VirtualClock: LocalClock {
    private let current: Atomic<Int64>

    /// Creates a clock reading `start` nanoseconds.
    public init(start: Int64 = 0) { current = Atomic(start) }

    /// The current virtual instant.
    public func instant() -> LocalInstant { LocalInstant(nanoseconds: current.load(ordering: .acquiring)) }

    /// Moves the clock forwards by `nanoseconds` (never backwards).
    public func advance(by nanoseconds: Int64) {
        precondition(nanoseconds >= 0, "virtual time only moves forwards")
        current.add(nanoseconds, ordering: .acquiringAndReleasing)
    }

    /// Sets the clock to `time`, which must not be earlier than now.
    public func set(to time: Int64) {
        precondition(time >= current.load(ordering: .acquiring), "virtual time only moves forwards")
        current.store(time, ordering: .releasing)
    }
}
