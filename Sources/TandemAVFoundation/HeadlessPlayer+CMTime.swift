import TandemClock

// The members of AVPlayer that take or give a `CMTime`, over the built-in player's nanoseconds.
// `seek(to:)` is disfavoured, so that an argument both forms take (`.zero`) goes to Tandem's,
// which means the same.

extension HeadlessPlayer {
    /// Moves to `time`, keeping the rate, as AVPlayer's `seek(to:)`: Tandem's `seek(to:)` at `time`
    /// to the nearest nanosecond, proposed to the group while coordinated; a failure is published
    /// as `error`. A time that names no position (invalid, indefinite, infinite) is not sought:
    /// there is nowhere to go.
    @_disfavoredOverload
    public func seek(to time: CMTime) {
        guard let nanoseconds = time.nanoseconds else { return }
        seek(to: ItemTime(nanoseconds: nanoseconds))
    }

    /// Moves to `time` within the tolerances given, as AVPlayer's
    /// `seek(to:toleranceBefore:toleranceAfter:)`: the built-in player always lands exactly on
    /// `time` (it decodes from the key frame before it and presents from `time` on), which every
    /// tolerance admits, so this is `seek(to:)`. Negative or invalid tolerances are ignored for the
    /// same reason.
    public func seek(to time: CMTime, toleranceBefore: CMTime, toleranceAfter: CMTime) {
        seek(to: time)
    }

    /// The current media time, as AVPlayer's `currentTime()`: `itemTime()` now, in nanoseconds
    /// (`timescale` 1,000,000,000), exactly.
    public func currentTime() -> CMTime {
        CMTime(itemTime())
    }
}
