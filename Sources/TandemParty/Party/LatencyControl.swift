import Synchronization

/// The party's latency offset: `Configuration.latencyOffset` to start with,
/// changed live (`WatchParty.setLatencyOffset`, `moveLatencyOffset`) and reported as
/// `latency-offset`. Positive presents earlier, for an output that lags. It is local: nothing
/// of it goes on the wire.
final class LatencyControl: Sendable {
    private let milliseconds: Mutex<Int>
    private let apply: @Sendable (Int) -> Void

    /// Starts at `milliseconds` (applied by the player's options already); `apply` gives the
    /// player each new value, in ms.
    init(milliseconds: Int, apply: @escaping @Sendable (Int) -> Void) {
        self.milliseconds = Mutex(milliseconds)
        self.apply = apply
    }

    /// The offset now (ms).
    var current: Int { milliseconds.withLock { $0 } }

    /// Sets it to `value` clamped to `Configuration.latencyOffsets`; returns what it became.
    @discardableResult
    func set(_ value: Int) -> Int {
        let range = WatchParty.Configuration.latencyOffsets
        let clamped = min(max(value, range.lowerBound), range.upperBound)
        milliseconds.withLock { $0 = clamped }
        apply(clamped)
        return clamped
    }

    /// Moves it by `delta` (clamped); returns what it became.
    @discardableResult
    func move(by delta: Int) -> Int { set(current + delta) }
}
