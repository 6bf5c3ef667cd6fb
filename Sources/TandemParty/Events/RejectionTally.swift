import Foundation
import Tandem
import TandemClock

/// The bodies the session dropped on arrival, counted per sender, path and reason over an
/// interval, so that a flood of bad records costs a line a second, not a line a record.
///
/// The first rejection of a kind (a sender, a path and a reason) is reported at once, with a
/// count of 1, and opens an interval; the ones that follow within it are counted, and reported
/// as one count when it ends (`flush(now:)`, or the next rejection after it), which opens the
/// next. An interval with nothing counted closes the kind: its next rejection is reported at
/// once again. A pure value on an injected clock: the caller passes the instant and emits what
/// it returns.
public struct RejectionTally: Sendable, Equatable {
    /// The interval over which rejections of a kind are counted: one second.
    public static let defaultInterval = TimeSpan.seconds(1)

    /// What is counted together.
    public struct Kind: Sendable, Hashable {
        /// Why (`Rejection.reason`).
        public var reason: RejectionReason
        /// Its signer, or whom the relay named, if anyone.
        public var sender: UUID?
        /// What it arrived as.
        public var path: String

        /// The kind of `rejection`.
        public init(_ rejection: Rejection) {
            (reason, sender, path) = (rejection.reason, rejection.sender, rejection.path)
        }
    }

    /// A count to report.
    public struct Count: Sendable, Hashable {
        /// What was rejected.
        public var kind: Kind
        /// How many, since the last count of the kind.
        public var count: Int
    }

    private struct Window: Sendable, Equatable {
        var endsAt: LocalInstant
        var counted: Int
    }

    /// How long a kind's rejections are counted together.
    public let interval: TimeSpan
    private var windows: [Kind: Window] = [:]
    /// The order kinds were first seen in, so that counts come out in a stable order.
    private var kinds: [Kind] = []

    /// A tally over `interval` (at least a millisecond).
    public init(interval: TimeSpan = defaultInterval) {
        self.interval = max(.milliseconds(1), interval)
    }

    /// Takes `rejection` at `now`: what to report now (the counts of intervals that ended, then
    /// this one when its kind had no interval open).
    public mutating func record(_ rejection: Rejection, now: LocalInstant) -> [Count] {
        var out = flush(now: now)
        let kind = Kind(rejection)
        if windows[kind] != nil {
            windows[kind]?.counted += 1
        } else {
            windows[kind] = Window(endsAt: now + interval, counted: 0)
            kinds.append(kind)
            out.append(Count(kind: kind, count: 1))
        }
        return out
    }

    /// The counts of the intervals that ended by `now`, each kind's once; a kind that counted
    /// nothing in its interval closes.
    public mutating func flush(now: LocalInstant) -> [Count] {
        guard let due = nextFlush, due <= now else { return [] }
        var out: [Count] = []
        var open: [Kind] = []
        for kind in kinds {
            guard let window = windows[kind] else { continue }
            guard window.endsAt <= now else {
                open.append(kind)
                continue
            }
            if window.counted > 0 {
                out.append(Count(kind: kind, count: window.counted))
                windows[kind] = Window(endsAt: now + interval, counted: 0)
                open.append(kind)
            } else {
                windows[kind] = nil
            }
        }
        kinds = open
        return out
    }

    /// When the next interval ends (nil when none is open): the caller flushes then.
    public var nextFlush: LocalInstant? { windows.values.lazy.map(\.endsAt).min() }
}
