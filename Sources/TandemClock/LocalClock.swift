/// A monotonic clock: a participant's own clock, read as `LocalInstant`s.
///
/// Everything that needs "now" takes one of these, so that tests and benchmarks can substitute a
/// virtual clock or one with an injected offset and drift.
///
/// A conforming type implements `instant()`. One written against the bare form implements
/// `now()` instead, and its `instant()` then comes from it (with a deprecation warning that says
/// to implement `instant()`); a type that implements neither recurses forever.
public protocol LocalClock: Sendable {
    /// The current instant. Never decreases between calls.
    func instant() -> LocalInstant

    /// The current instant in bare nanoseconds.
    @available(*, deprecated, renamed: "instant()", message: "read instant(), a LocalInstant")
    func now() -> Int64
}

extension LocalClock {
    /// The instant `now()` reads, for a clock that implements only the bare form.
    @available(*, deprecated, message: "implement instant(), which returns a LocalInstant, in place of now()")
    public func instant() -> LocalInstant { LocalInstant(nanoseconds: now()) }

    /// `instant()` in bare nanoseconds.
    @available(*, deprecated, renamed: "instant()", message: "read instant(), a LocalInstant")
    public func now() -> Int64 { instant().nanoseconds }
}
