import TandemClock
import TandemNet

/// One participant's view of a shared serial loop: the same tasks on the same thread, but `now`
/// and every deadline in the participant's own local time, which runs off the loop's clock by an
/// offset and a drift (`SkewedClock`).
///
/// A shell under test (a coordinator's, a clock prober's) takes any `SerialEventLoop`; given
/// this view of a `VirtualRelayWorld`'s embedded loop, it reads its local clock and schedules its
/// wake-ups in local time, while the world moves in session time. A local deadline is mapped to
/// the first loop instant at which the local clock reads it, so that a task never runs early.
public final class SkewedEventLoop: SerialEventLoop, Sendable {
    /// The loop everything runs on.
    package let base: any SerialEventLoop
    /// The participant's clock over the loop's.
    public let localClock: SkewedClock<AnyLocalClock>

    /// A view of `base` whose clock reads `offset` ahead of it at `origin` and gains `driftPPM`.
    package init(base: any SerialEventLoop, offset: Int64, driftPPM: Double, origin: Int64) {
        self.base = base
        localClock = SkewedClock(base: AnyLocalClock(base.clock), offset: offset, driftPPM: driftPPM, origin: origin)
    }

    /// The participant's local clock.
    package var clock: any LocalClock { localClock }
    /// How often tickers run, on the loop's clock (a tick passes the local time).
    package var tickInterval: TimeSpan { base.tickInterval }
    /// Whether the caller runs on the thread that drives the loop.
    public var inLoop: Bool { base.inLoop }
    /// Whether another thread drives the loop now.
    public var drivenElsewhere: Bool { base.drivenElsewhere }

    /// Runs `task` on the loop, after the tasks queued before it. Any thread.
    public func execute(_ task: @escaping @Sendable () -> Void) { base.execute(task) }

    /// Runs `task` once the participant's local clock reads `deadline`. Any thread.
    @discardableResult
    public func schedule(at deadline: LocalInstant, _ task: @escaping @Sendable () -> Void) -> ScheduledTask {
        base.schedule(at: LocalInstant(nanoseconds: loopInstant(atLocal: deadline.nanoseconds)), task)
    }

    /// Calls `body` with the local time on every tick of the loop. Loop only.
    @discardableResult
    public func addTicker(_ body: @escaping (LocalInstant) -> Void) -> UInt64 {
        let clock = localClock
        return base.addTicker { now in body(LocalInstant(nanoseconds: clock.localTime(atBase: now.nanoseconds))) }
    }

    /// Stops a ticker. Loop only.
    public func removeTicker(_ id: UInt64) { base.removeTicker(id) }

    /// The loop's assertion of confinement.
    public func preconditionInLoop(_ function: StaticString = #function, file: StaticString = #fileID, line: UInt = #line) {
        base.preconditionInLoop(function, file: file, line: line)
    }

    /// The first loop instant at which the local clock reads `local` or later.
    public func loopInstant(atLocal local: Int64) -> Int64 {
        guard local > Int64.min / 2, local < Int64.max / 2 else { return local }
        var instant = localClock.baseTime(atLocal: local)
        // The inverse rounds: step to the first instant that is not early.
        while localClock.localTime(atBase: instant) < local { instant += 1 }
        while instant > Int64.min, localClock.localTime(atBase: instant - 1) >= local { instant -= 1 }
        return instant
    }
}

/// Any `LocalClock` as a concrete type, so that a `SkewedClock` can sit over a loop's clock.
public struct AnyLocalClock: LocalClock {
    private let wrapped: any LocalClock

    /// Wraps `clock`.
    public init(_ clock: any LocalClock) { wrapped = clock }

    /// What the wrapped clock reads.
    public func instant() -> LocalInstant { wrapped.instant() }
}
