import TandemParty
import Synchronization

/// The watch's latency offset (issue 15, item 6): `--latency-offset MS` to start with, keys `-`
/// and `=` (10 ms down or up) and the line command `offset MS` to change it live, shown on the
/// status line while it is not 0 and reported as `{"event":"latency-offset","ms":MS}`. Positive
/// presents earlier, for an output that lags. It is local: nothing of it goes on the wire.
final class LatencyControl: Sendable {
    /// How far a key moves it (ms).
    static let step = 10

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

    /// Sets it to `value` clamped to `WatchOptions.latencyOffsets`; returns what it became.
    @discardableResult
    func set(_ value: Int) -> Int {
        let clamped = min(max(value, WatchOptions.latencyOffsets.lowerBound), WatchOptions.latencyOffsets.upperBound)
        milliseconds.withLock { $0 = clamped }
        apply(clamped)
        return clamped
    }

    /// Moves it by `delta` (clamped); returns what it became.
    @discardableResult
    func move(by delta: Int) -> Int { set(current + delta) }

    /// The status line's note, nil at 0.
    var statusText: String? {
        let value = current
        return value == 0 ? nil : "offset \(value > 0 ? "+" : "")\(value) ms"
    }
}

extension WatchRunner {
    /// `offset MS`: the new offset, a whole number of ms within `WatchOptions.latencyOffsets`.
    func offsetArgument(_ words: [String]) throws(CLIError) -> Int {
        guard words.count == 2, let value = Int(words[1]), WatchOptions.latencyOffsets.contains(value) else {
            throw .usage("'\(words.joined(separator: " "))' wants a whole number of ms from -1000 to 1000 (positive presents earlier)")
        }
        return value
    }

    /// Reports the offset now in force.
    func reportOffset(_ milliseconds: Int, events: EventPrinter) {
        events.emit(.latencyOffset(.init(milliseconds: milliseconds)))
    }
}
