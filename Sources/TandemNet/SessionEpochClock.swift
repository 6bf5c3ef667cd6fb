import TandemClock

/// The relay's session clock: the raw monotonic clock plus a fixed offset, so that the session
/// time a relay stamps on its time replies and ordered broadcasts says nothing about how long
/// its host has been up (`CLOCK_MONOTONIC` counts from boot).
///
/// `random()` starts the session clock at a random reading, independent of the host's uptime:
/// what `tandem serve` and `tandem host` use unless told otherwise. A fixed `offset` (0 makes the
/// session clock the raw monotonic clock) is for measurement on one's own machine, where
/// presentation logs on the raw monotonic clock are compared with session instants. The mapping
/// to and from the raw clock is exact integer arithmetic, so a host's participants that read the
/// relay's clock directly (`DerivedSessionClock`) see exactly what probers estimate.
public struct SessionEpochClock: MonotonicDerivedClock {
    /// Session time minus raw monotonic time, in nanoseconds.
    public let offset: Int64
    private let base = SystemClock()

    /// The random session clock starts in this range of readings: above 2^44 ns (about five
    /// hours), below 2^52 ns (about 52 days), so that it looks like any uptime, stays far from
    /// overflow, and converts to `Double` exactly for years.
    public static let randomStart: Range<Int64> = (1 << 44)..<(1 << 52)
    /// The largest offset accepted from a user: readings stay far from overflow.
    public static let maximumOffset: Int64 = 1 << 60

    /// A session clock `offset` ns ahead of the raw monotonic clock.
    public init(offset: Int64) {
        precondition(abs(offset) <= SessionEpochClock.maximumOffset, "a session epoch offset is within ±2^60 ns")
        self.offset = offset
    }

    /// A session clock that reads a random value in `randomStart` now.
    public static func random() -> SessionEpochClock {
        var generator = SystemRandomNumberGenerator()
        let start = Int64.random(in: randomStart, using: &generator)
        return SessionEpochClock(offset: start - SystemClock().now())
    }

    /// The clock a command-line value names: `random`, or an offset in nanoseconds (`0`: the raw
    /// monotonic clock); nil for anything else.
    public init?(argument: String) {
        if argument == "random" {
            self = .random()
            return
        }
        guard let offset = Int64(argument), abs(offset) <= SessionEpochClock.maximumOffset else { return nil }
        self.init(offset: offset)
    }

    /// The session time now.
    public func now() -> Int64 { base.now() + offset }

    /// The raw monotonic reading at session time `localTime`.
    public func monotonicTime(atLocal localTime: Int64) -> Int64 { localTime - offset }

    /// The session time at raw monotonic reading `monotonicTime`.
    public func localTime(atMonotonic monotonicTime: Int64) -> Int64 { monotonicTime + offset }
}
