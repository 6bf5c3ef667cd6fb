import Foundation
import Tandem
import TandemClock

/// The forward jumps of the relay's session time (`GroupSession.sessionTimeJumps()`), said at
/// most once an interval, so that a relay that jumps again and again costs a line every ten
/// seconds, not a line a jump.
///
/// The first jump is said at once, with a count of 1, and opens an interval; the ones that follow
/// within it are counted, and said as one line when it ends (`flush(now:)`, or the next jump
/// after it): how many, the furthest ahead among them and the newest order. That opens the next
/// interval; an interval with nothing counted closes, and the next jump is said at once again.
/// A pure value on an injected clock: the caller passes the instant and emits what it returns.
public struct TimeJumpTally: Sendable, Equatable {
    /// The interval over which jumps are counted together: ten seconds.
    public static let defaultInterval = TimeSpan.seconds(10)

    /// What to say: one jump, or the jumps of an interval.
    public struct Count: Sendable, Equatable {
        /// The newest order among them.
        public var order: UInt64
        /// The furthest ahead of the bound among them.
        public var ahead: TimeSpan
        /// How many jumps this stands for.
        public var count: Int

        /// A count of `count` jumps, the newest at `order`, the furthest `ahead`.
        public init(order: UInt64, ahead: TimeSpan, count: Int) { (self.order, self.ahead, self.count) = (order, ahead, count) }
    }

    private struct Window: Sendable, Equatable {
        var endsAt: LocalInstant
        var counted: Count?
    }

    /// How long jumps are counted together.
    public let interval: TimeSpan
    private var window: Window?

    /// A tally over `interval` (at least a millisecond).
    public init(interval: TimeSpan = defaultInterval) {
        self.interval = max(.milliseconds(1), interval)
    }

    /// Takes `jump` at `now`: what to say now (the count of an interval that ended, then this
    /// jump when no interval was open).
    public mutating func record(_ jump: SessionTimeJump, now: LocalInstant) -> [Count] {
        var out = flush(now: now).map { [$0] } ?? []
        if var open = window {
            var counted = open.counted ?? Count(order: jump.order, ahead: jump.ahead, count: 0)
            counted.count += 1
            counted.order = max(counted.order, jump.order)
            counted.ahead = max(counted.ahead, jump.ahead)
            open.counted = counted
            window = open
        } else {
            window = Window(endsAt: now + interval, counted: nil)
            out.append(Count(order: jump.order, ahead: jump.ahead, count: 1))
        }
        return out
    }

    /// The count of the interval that ended by `now`, if it counted any; an interval that counted
    /// nothing closes.
    public mutating func flush(now: LocalInstant) -> Count? {
        guard let open = window, open.endsAt <= now else { return nil }
        guard let counted = open.counted else {
            window = nil
            return nil
        }
        window = Window(endsAt: now + interval, counted: nil)
        return counted
    }

    /// When the open interval ends (nil when none is open): the caller flushes then.
    public var nextFlush: LocalInstant? { window?.endsAt }
}
