import Dispatch
import Synchronization
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
package protocol SerialEventLoop: Confinement {
    /// The clock that scheduled tasks and ticks are on.
    var clock: any LocalClock { get }
    /// How often tickers run, on `clock`.
    var tickInterval: TimeSpan { get }
    /// Whether the caller runs on the thread that drives the loop now.
    var inLoop: Bool { get }
    /// Whether a thread other than the caller's drives the loop now: work for the loop must then
    /// be handed to it. False on the loop's thread, and while nothing drives the loop (before it
    /// starts, after it stops, between a test's advances), when loop-only work may run on the
    /// caller's thread, as `preconditionInLoop` allows.
    var drivenElsewhere: Bool { get }

    /// Runs `task` on the loop, after the tasks queued before it. Any thread.
    func execute(_ task: @escaping @Sendable () -> Void)

    /// Runs `task` on the loop once `clock` reads `deadline`; a deadline already past runs on the
    /// next pass. Tasks due at one instant run in the order they were scheduled. Any thread;
    /// cancel with the handle until it runs.
    @discardableResult
    func schedule(at deadline: LocalInstant, _ task: @escaping @Sendable () -> Void) -> ScheduledTask

    /// Calls `body` with the loop clock's instant on every tick until `removeTicker`. Loop only.
    @discardableResult
    func addTicker(_ body: @escaping (LocalInstant) -> Void) -> UInt64

    /// Stops a ticker. Loop only.
    func removeTicker(_ id: UInt64)

    /// Traps, in debug builds, unless the caller runs on the loop's thread or nothing drives the
    /// loop at the moment (before it starts, after it stops, between a test's advances).
    func preconditionInLoop(_ function: StaticString, file: StaticString, line: UInt)
}

extension SerialEventLoop {
    /// The loop clock's instant now.
    package var now: LocalInstant { clock.instant() }

    /// Runs `task` on the loop `delay` from now on the loop's clock (now, for a negative delay).
    /// Any thread.
    @discardableResult
    package func schedule(after delay: TimeSpan, _ task: @escaping @Sendable () -> Void) -> ScheduledTask {
        schedule(at: now + max(delay, .zero), task)
    }

    /// `preconditionInLoop(_:file:line:)` naming the caller.
    package func preconditionInLoop(function: StaticString = #function, file: StaticString = #fileID, line: UInt = #line) {
        preconditionInLoop(function, file: file, line: line)
    }

    /// Runs `body` on the loop and returns what it returns, or throws what it throws: for a
    /// synchronous call whose caller reads the loop's decision at once. On the loop, or while
    /// nothing drives it, `body` runs at once on the caller's thread; else it is handed to the
    /// loop, after what is queued, and the caller waits for it. The loop never waits on another
    /// thread, so this cannot deadlock while the loop runs; the caller must not hold what a task
    /// of the loop's may take.
    package func runAndWait<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) throws -> Value {
        guard drivenElsewhere else { return try body() }
        let outcome = Mutex<Result<Value, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        execute {
            let result = Result { try body() }
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try outcome.withLock { $0! }.get()
    }
}
