/// A monotonic clock read in nanoseconds.
///
/// Everything that needs "now" takes one of these, so that tests and benchmarks can substitute a
/// virtual clock or one with an injected offset and drift.
public protocol LocalClock: Sendable {
    /// The current time in nanoseconds. Never decreases between calls.
    func now() -> Int64
}
