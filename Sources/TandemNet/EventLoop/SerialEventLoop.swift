import TandemClock

/// A serial event loop: what a shell needs to carry out a pure core's directives one at a time,
/// on an injected clock, whether the loop is the real one (`EventLoop`, epoll on a thread of its
/// own, real time) or a test's embedded twin (`EmbeddedEventLoop` in TandemTestKit, virtual time
/// that moves only when the test advances it).
///
/// Everything a loop runs (tasks, scheduled tasks, tickers) runs one thing at a time on the
/// thread that drives the loop, so state confined to the loop needs no lock. Other threads reach
/// it only through `execute` and `schedule(at:_:)`; methods documented "loop only" call
/// `preconditionInLoop()` to assert it.
package protocol SerialEventLoop: AnyObject, Sendable {
    /// The clock that scheduled tasks and ticks are on (ns).
    var clock: any LocalClock { get }
    /// How often tickers run, in nanoseconds of `clock`.
    var tickInterval: Int64 { get }
    /// Whether the caller runs on the thread that drives the loop now.
    var inLoop: Bool { get }

    /// Runs `task` on the loop, after the tasks queued before it. Any thread.
    func execute(_ task: @escaping @Sendable () -> Void)

    /// Runs `task` on the loop once `clock` reads `deadline` (ns); a deadline already past runs
    /// on the next pass. Tasks due at one instant run in the order they were scheduled. Any
    /// thread; cancel with the handle until it runs.
    @discardableResult
    func schedule(at deadline: Int64, _ task: @escaping @Sendable () -> Void) -> ScheduledTask

    /// Calls `body` with the time on every tick until `removeTicker`. Loop only.
    @discardableResult
    func addTicker(_ body: @escaping (Int64) -> Void) -> UInt64

    /// Stops a ticker. Loop only.
    func removeTicker(_ id: UInt64)

    /// Traps, in debug builds, unless the caller runs on the loop's thread or nothing drives the
    /// loop at the moment (before it starts, after it stops, between a test's advances).
    func preconditionInLoop(_ function: StaticString, file: StaticString, line: UInt)
}

extension SerialEventLoop {
    /// The loop clock's reading now (ns).
    package var now: Int64 { clock.now() }

    /// Runs `task` on the loop `delay` nanoseconds from now on the loop's clock. Any thread.
    @discardableResult
    package func schedule(after delay: Int64, _ task: @escaping @Sendable () -> Void) -> ScheduledTask {
        schedule(at: now.saturatingAdding(max(delay, 0)), task)
    }

    /// `preconditionInLoop(_:file:line:)` naming the caller.
    package func preconditionInLoop(function: StaticString = #function, file: StaticString = #fileID, line: UInt = #line) {
        preconditionInLoop(function, file: file, line: line)
    }
}
