#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import TandemClock
import TandemNet
import TandemHarness

/// A serial event loop on virtual time, for deterministic tests: the embedded twin of TandemNet's
/// epoll `EventLoop`, which the in-memory relay, its links and any shell on a `SerialEventLoop`
/// run on unchanged.
///
/// Nothing runs by itself and its clock never reads the system's: time moves only when the test
/// calls `advance(by:)` or `advance(to:)`, which run every task due by then in order of deadline,
/// then of scheduling, each with the clock set to its own deadline; `run()` runs what is due now.
/// `execute` is a task scheduled for now, so tasks and scheduled tasks share one order. Tickers
/// run every `tickInterval` from the moment the first one is added, after the tasks due at the
/// same instant (as on the real loop, whose pass runs tasks before tickers).
///
/// The thread that calls `advance` or `run` drives the loop for that call: it is the loop's
/// thread then, and `preconditionInLoop()` holds on it and traps on any other; between calls
/// nothing drives it, and loop-only methods may be called from anywhere, as on a real loop that
/// has not started. `execute` and `schedule` may be called from any thread at any time. The
/// semantics follow swift-nio's `EmbeddedEventLoop` (`Sources/NIOEmbedded/Embedded.swift`:
/// a priority queue by ready time and insertion order, `advanceTime(to:)`, `run()`).
///
/// Confinement (why unchecked): the scheduled tasks sit in a `Mutex`; the tickers (closures
/// that are not `Sendable`) and the counts are confined to the driving thread, or to the test
/// between drives, and the loop-only methods assert it (`preconditionInLoop()`).
public final class EmbeddedEventLoop: SerialEventLoop, @unchecked Sendable {
    /// The loop's virtual clock: it reads what the loop last advanced it to.
    public let virtualClock: VirtualClock
    /// How often tickers run, in virtual time.
    public let tickInterval: TimeSpan

    private let scheduled = Mutex(ScheduledTaskQueue())
    /// The driving thread's `pthread_t` while `advance` or `run` runs, 0 otherwise.
    private let driver = Atomic<UInt>(0)

    // Confined to the driving thread (or to the test between drives).
    private var tickers: [UInt64: (LocalInstant) -> Void] = [:]
    private var nextTicker: UInt64 = 0
    private var nextTick = LocalInstant.distantFuture
    private var ranTasks = 0

    /// A loop whose clock starts at `start` (ns) and whose tickers run every `tickInterval` (ns).
    public convenience init(start: Int64 = 0, tickInterval: Int64 = 20_000_000) {
        self.init(start: LocalInstant(nanoseconds: start), tickInterval: TimeSpan(nanoseconds: tickInterval))
    }

    /// A loop whose clock starts at `start` and whose tickers run every `tickInterval`.
    public init(start: LocalInstant, tickInterval: TimeSpan) {
        precondition(tickInterval > .zero, "a tick interval must be positive")
        virtualClock = VirtualClock(start: start.nanoseconds)
        self.tickInterval = tickInterval
    }

    /// The clock tasks are due on.
    package var clock: any LocalClock { virtualClock }

    /// The virtual time now (ns).
    public var currentTime: Int64 { virtualClock.instant().nanoseconds }

    /// The virtual instant now.
    public var currentInstant: LocalInstant { virtualClock.instant() }

    /// How many tasks and ticks the loop has run so far.
    public var ranCount: Int { ranTasks }

    /// Whether the caller is the thread driving the loop now.
    public var inLoop: Bool {
        let thread = driver.load(ordering: .acquiring)
        return thread != 0 && pthread_equal(pthread_t(thread), pthread_self()) != 0
    }

    /// Whether another thread drives the loop now (in `advance` or `run`): between drives, no
    /// thread does, and loop-only work runs on the caller's.
    public var drivenElsewhere: Bool {
        let thread = driver.load(ordering: .acquiring)
        return thread != 0 && pthread_equal(pthread_t(thread), pthread_self()) == 0
    }

    /// Traps, in debug builds, when a thread other than the one driving the loop calls a
    /// loop-only method while the loop is driven.
    public func preconditionInLoop(_ function: StaticString = #function, file: StaticString = #fileID, line: UInt = #line) {
        assert(inLoop || driver.load(ordering: .acquiring) == 0,
               "EmbeddedEventLoop.\(function) called off the thread that drives the loop", file: file, line: line)
    }

    // MARK: Tasks

    /// Runs `task` at the current virtual time, after what is already due then, on the next
    /// `run()` or `advance`. Any thread.
    public func execute(_ task: @escaping @Sendable () -> Void) {
        schedule(at: currentInstant, task)
    }

    /// Runs `task` once virtual time reaches `deadline`, in the order of scheduling among tasks
    /// due at the same instant. A deadline already past counts as now: the task runs after what
    /// is due now, as on the real loop, where it waits for the next pass. Any thread; cancel with
    /// the handle until it runs.
    @discardableResult
    public func schedule(at deadline: LocalInstant, _ task: @escaping @Sendable () -> Void) -> ScheduledTask {
        let scheduledTask = ScheduledTask(due: max(deadline, currentInstant), body: task)
        scheduled.withLock { $0.insert(scheduledTask) }
        return scheduledTask
    }

    /// `schedule(at:_:)` at a virtual time in bare nanoseconds, as tests write it.
    @discardableResult
    public func schedule(at deadline: Int64, _ task: @escaping @Sendable () -> Void) -> ScheduledTask {
        schedule(at: LocalInstant(nanoseconds: deadline), task)
    }

    /// Runs `task` `delay` virtual nanoseconds from now, as tests write it. Any thread.
    @discardableResult
    public func schedule(after delay: Int64, _ task: @escaping @Sendable () -> Void) -> ScheduledTask {
        schedule(after: TimeSpan(nanoseconds: delay), task)
    }

    /// How many scheduled tasks wait (cancelled ones that have not surfaced included).
    public var scheduledCount: Int { scheduled.withLock { $0.count } }

    /// The deadline of the next task or tick still to run, if any.
    public var nextDeadline: Int64? { nextDue?.nanoseconds }

    /// The instant of the next task or tick still to run, if any.
    public var nextDue: LocalInstant? {
        let task = scheduled.withLock { $0.nextPendingDeadline() }
        let tick = tickers.isEmpty ? nil : nextTick
        switch (task, tick) {
        case let (task?, tick?): return min(task, tick)
        case let (task?, nil): return task
        case let (nil, tick): return tick
        }
    }

    // MARK: Tickers

    /// Calls `body` with the virtual time every `tickInterval`, starting one interval from now
    /// if no ticker ran before, until `removeTicker`. Loop only.
    @discardableResult
    public func addTicker(_ body: @escaping (LocalInstant) -> Void) -> UInt64 {
        preconditionInLoop()
        if tickers.isEmpty { nextTick = currentInstant + tickInterval }
        nextTicker += 1
        tickers[nextTicker] = body
        return nextTicker
    }

    /// Stops a ticker. Loop only.
    public func removeTicker(_ id: UInt64) {
        preconditionInLoop()
        tickers[id] = nil
        if tickers.isEmpty { nextTick = .distantFuture }
    }

    /// How many tickers run.
    public var tickerCount: Int { tickers.count }

    // MARK: Driving

    /// Runs every task due at the current virtual time, including those that they schedule for
    /// it; time does not move.
    public func run() {
        drive { runDue() }
    }

    /// Moves virtual time forwards by `nanoseconds`, running everything due on the way.
    public func advance(by nanoseconds: Int64) {
        precondition(nanoseconds >= 0, "virtual time only moves forwards")
        advance(to: currentTime.saturatingAdding(nanoseconds))
    }

    /// Moves virtual time forwards to `deadline`, running every task and tick due by then in
    /// order of deadline, then of scheduling, each at its own instant; then sets the clock to
    /// `deadline` and runs what is due there. A deadline in the past only runs what is due now.
    public func advance(to deadline: Int64) {
        drive {
            runDue()
            while let next = nextDeadline, next <= deadline {
                if next > currentTime { virtualClock.set(to: next) }
                runDue()
            }
            if deadline > currentTime { virtualClock.set(to: deadline) }
            runDue()
        }
    }

    /// Advances through each next deadline until `condition` holds, at most `limit` virtual
    /// nanoseconds from now; true when it held. A bounded wait in virtual time: no sleep, no
    /// poll of anything real.
    @discardableResult
    public func advance(until condition: () -> Bool, within limit: Int64) -> Bool {
        let end = currentTime.saturatingAdding(limit)
        run()
        while !condition() {
            guard let next = nextDeadline, next <= end else {
                advance(to: end)
                return condition()
            }
            advance(to: next)
        }
        return true
    }

    /// Runs the tasks due now one at a time, re-reading the queue after each (a task may
    /// schedule another for now), then the tickers if a tick is due.
    private func runDue() {
        let now = currentInstant
        while let task = scheduled.withLock({ $0.popFirst(dueAt: now) }) {
            ranTasks += 1
            task.body()
        }
        guard !tickers.isEmpty, nextTick <= now else { return }
        nextTick = now + tickInterval
        for id in tickers.keys.sorted() {
            // A ticker removed by one that ran before it in this tick does not run.
            guard let ticker = tickers[id] else { continue }
            ranTasks += 1
            ticker(now)
        }
        // What the tickers scheduled for now runs now.
        while let task = scheduled.withLock({ $0.popFirst(dueAt: now) }) {
            ranTasks += 1
            task.body()
        }
    }

    private func drive(_ body: () -> Void) {
        let me = UInt(pthread_self())
        let (exchanged, _) = driver.compareExchange(expected: 0, desired: me, ordering: .acquiringAndReleasing)
        precondition(exchanged, "an embedded event loop is driven by one thread at a time, and not from its own tasks")
        defer { driver.store(0, ordering: .releasing) }
        body()
    }
}
