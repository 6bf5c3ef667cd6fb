#if canImport(Glibc)
import Glibc
#endif
import CTandemSystem
import Dispatch
import Foundation
import Synchronization
import TandemClock

/// A thread that waits on many sockets with epoll and runs what they are ready for, plus tasks
/// handed to it from other threads, scheduled one-shot tasks and a periodic tick: the shell that
/// carries out the relay's and the links' pure cores.
///
/// Everything registered runs on the loop's thread, one thing at a time, so the state that
/// handlers touch needs no lock; other threads reach it only through `execute` and `schedule`.
/// That confinement is why the class is `@unchecked Sendable`, and loop-only methods assert it
/// (`preconditionInLoop()`) in debug builds. The shape follows swift-nio's `SelectableEventLoop`
/// (tasks, a wake-up descriptor, then readiness).
///
/// Each descriptor keeps its place: registrations live in a table indexed by descriptor, and
/// epoll hands back a token naming that place, so registering, changing interest and
/// deregistering cost O(1), and a pass costs what is ready, not what is registered. Waits are to
/// the nanosecond (`epoll_pwait2`, or a timer descriptor on kernels before 5.11), on the
/// injected clock's deadlines.
package final class EventLoop: SerialEventLoop, @unchecked Sendable {
    /// What a descriptor is watched for, or became ready for.
    package struct Readiness: OptionSet {
        package let rawValue: UInt32
        package static let readable = Readiness(rawValue: tandem_epoll_in)
        package static let writable = Readiness(rawValue: tandem_epoll_out)
        package init(rawValue: UInt32) { self.rawValue = rawValue }
    }

    /// Called on the loop's thread with what the descriptor is ready for; `failed` when the
    /// descriptor reported an error or hang-up (a read then tells which).
    package typealias Handler = (_ readable: Bool, _ writable: Bool, _ failed: Bool) -> Void

    /// The clock that ticks and scheduled tasks are on.
    package let clock: any LocalClock
    /// How often tickers run, in nanoseconds.
    package let tickInterval: TimeSpan
    private let name: String
    private let epoll: Int32
    private let wakeDescriptor: Int32
    /// The timer descriptor that times waits where epoll_pwait2 is missing (older kernels), or
    /// nil where epoll_pwait2 waits to the nanosecond by itself.
    private let timerDescriptor: Int32?
    private let tasks = Mutex<[@Sendable () -> Void]>([])
    private let lifecycle = Mutex(Lifecycle.idle)
    private let finished = DispatchSemaphore(value: 0)
    /// The running loop thread's `pthread_t`, 0 while no loop thread runs.
    private let loopThread = Atomic<UInt>(0)

    // Confined to the loop's thread.
    private var registrations: [Registration?] = []
    private var registeredCount = 0
    private var nextGeneration: UInt32 = 0
    private var failures: [UInt64] = []
    private var ready = [tandem_epoll_ready](repeating: tandem_epoll_ready(), count: Int(TANDEM_EPOLL_BATCH))
    private var tickers: [UInt64: (LocalInstant) -> Void] = [:]
    private var nextTicker: UInt64 = 0
    private var nextTick = LocalInstant.zero
    var scheduled = ScheduledTaskQueue()

    private enum Lifecycle { case idle, running, stopping, stopped }

    /// One descriptor's place: its handler, what it is watched for, and the generation that its
    /// epoll token carries, so that an event queued for a descriptor number since deregistered
    /// (and perhaps reused by a new socket) is recognised as stale and dropped.
    private struct Registration {
        var handler: Handler
        var interest: Readiness
        var generation: UInt32
    }

    /// The tokens of the wake-up and timer descriptors; descriptors' tokens are their number and
    /// generation, and no descriptor's number is 2^32-1 or 2^32-2.
    private static let wakeToken = UInt64.max
    private static let timerToken = UInt64.max - 1

    /// A loop named `name` (the thread's name), ticking every `tickInterval`.
    package convenience init(name: String, clock: any LocalClock = SystemClock(), tickInterval: TimeSpan = .milliseconds(20)) throws(SystemCallError) {
        try self.init(name: name, clock: clock, tickInterval: tickInterval, timedByDescriptor: !EventLoop.hasPreciseWait)
    }

    /// A loop that times its waits with a timer descriptor when `timedByDescriptor` is true (what
    /// kernels without epoll_pwait2 need; tests force it to cover that path here).
    init(name: String, clock: any LocalClock, tickInterval: TimeSpan, timedByDescriptor: Bool) throws(SystemCallError) {
        self.name = name
        self.clock = clock
        self.tickInterval = tickInterval
        var opened: [Int32] = []
        do {
            let epoll = try SystemCall.require("epoll_create1") { tandem_epoll_create() }
            opened.append(epoll)
            let wake = try SystemCall.require("eventfd") { tandem_eventfd() }
            opened.append(wake)
            try SystemCall.require("epoll_ctl") { tandem_epoll_ctl(epoll, tandem_epoll_add, wake, tandem_epoll_in, EventLoop.wakeToken) }
            var timer: Int32?
            if timedByDescriptor {
                let descriptor = try SystemCall.require("timerfd_create") { tandem_timerfd_create() }
                opened.append(descriptor)
                try SystemCall.require("epoll_ctl") { tandem_epoll_ctl(epoll, tandem_epoll_add, descriptor, tandem_epoll_in, EventLoop.timerToken) }
                timer = descriptor
            }
            self.epoll = epoll
            wakeDescriptor = wake
            timerDescriptor = timer
        } catch {
            for descriptor in opened { close(descriptor) }
            throw error
        }
    }

    deinit {
        if let timerDescriptor { close(timerDescriptor) }
        close(wakeDescriptor)
        close(epoll)
    }

    /// Whether this kernel has epoll_pwait2 (Linux 5.11 and later), asked once per process.
    static let hasPreciseWait: Bool = {
        let probe = tandem_epoll_create()
        guard probe >= 0 else { return false }
        defer { close(probe) }
        var ready = tandem_epoll_ready()
        return tandem_epoll_pwait2(probe, &ready, 1, 0) >= 0 || errno != ENOSYS
    }()

    // MARK: Lifecycle

    /// Starts the loop's thread. Calling it again does nothing.
    package func start() {
        let shouldStart = lifecycle.withLock { state in
            guard state == .idle else { return false }
            state = .running
            return true
        }
        guard shouldStart else { return }
        let thread = Thread { [self] in
            // The kernel's name too (Foundation's stays in Foundation), so that /proc and tools see it.
            _ = tandem_set_thread_name(String(name.prefix(15)))
            loopThread.store(UInt(pthread_self()), ordering: .releasing)
            run()
            loopThread.store(0, ordering: .releasing)
            finished.signal()
        }
        thread.name = name
        // The loop's own work is small; the default 8 MiB stack would only cost address space.
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Gives the running loop's thread `priority` (see `ThreadPriority`), waiting until it has
    /// been applied on that thread. Not from the loop; the loop must be started. Throws what the
    /// system refused (EPERM without the privilege), leaving the thread as it was.
    package func apply(_ priority: ThreadPriority) throws(SystemCallError) {
        precondition(!inLoop, "apply a priority from another thread: it waits for the loop's thread")
        let outcome = Mutex<SystemCallError?>(nil)
        let applied = DispatchSemaphore(value: 0)
        execute {
            do throws(SystemCallError) { try priority.applyToCurrentThread() } catch { outcome.withLock { $0 = error } }
            applied.signal()
        }
        guard applied.wait(timeout: .now() + .seconds(5)) == .success else {
            throw SystemCallError(call: "apply thread priority (the loop did not run)", errno: ETIMEDOUT)
        }
        if let error = outcome.withLock({ $0 }) { throw error }
    }

    /// Stops the loop and waits for its thread; tasks still queued are dropped. Not from the loop.
    package func stop() {
        precondition(!inLoop, "stop an event loop from another thread: it waits for the loop's thread")
        let wasRunning = lifecycle.withLock { state in
            defer { if state != .stopped { state = .stopping } }
            return state == .running
        }
        guard wasRunning else { return }
        wake()
        finished.wait()
        lifecycle.withLock { $0 = .stopped }
    }

    /// Drops every handler, ticker, scheduled and queued task, so that what they hold can go.
    /// Only once `stop()` has returned (the thread is gone); the loop cannot run again.
    package func reset() {
        precondition(lifecycle.withLock { $0 == .stopped || $0 == .idle }, "reset a loop only once it has stopped")
        for (descriptor, registration) in registrations.enumerated() where registration != nil {
            _ = tandem_epoll_ctl(epoll, tandem_epoll_del, Int32(descriptor), 0, 0)
        }
        registrations.removeAll()
        registeredCount = 0
        failures.removeAll()
        tickers.removeAll()
        scheduled.removeAll()
        tasks.withLock { $0.removeAll() }
    }

    /// Whether the caller runs on the loop's thread.
    package var inLoop: Bool {
        let thread = loopThread.load(ordering: .acquiring)
        return thread != 0 && pthread_equal(pthread_t(thread), pthread_self()) != 0
    }

    /// Whether the loop runs and the caller is another thread: from `start()` on (before its
    /// thread has begun too, since it will run what is queued) until its thread has ended.
    package var drivenElsewhere: Bool {
        guard !inLoop else { return false }
        return loopThread.load(ordering: .acquiring) != 0 || lifecycle.withLock { $0 == .running }
    }

    /// Traps, in debug builds, unless the caller runs on the loop's thread or no loop thread runs
    /// (before `start`, after `stop`): what every loop-only method checks.
    package func preconditionInLoop(_ function: StaticString = #function, file: StaticString = #fileID, line: UInt = #line) {
        assert(inLoop || loopThread.load(ordering: .acquiring) == 0,
               "EventLoop.\(function) called off the loop's thread '\(name)'", file: file, line: line)
    }

    // MARK: Tasks

    /// How many tasks wait for the loop's next pass: what a test reads to know that a job it set
    /// going is queued.
    package var queuedTaskCount: Int { tasks.withLock { $0.count } }

    /// Runs `task` on the loop's thread, after the tasks queued before it. Any thread.
    package func execute(_ task: @escaping @Sendable () -> Void) {
        let first = tasks.withLock { queue in
            queue.append(task)
            return queue.count == 1
        }
        // One wake-up per batch: a non-empty queue already has one pending.
        if first { wake() }
    }

    // MARK: Descriptors

    /// Watches `descriptor` for `interest` (replacing its handler if it is watched already).
    /// Loop thread only. A descriptor epoll refuses (closed, or a regular file) is reported to
    /// its handler as failed on the next pass, as poll reports POLLNVAL.
    package func register(_ descriptor: Int32, interest: Readiness, handler: @escaping Handler) {
        preconditionInLoop()
        precondition(descriptor >= 0, "register a valid descriptor, not \(descriptor)")
        let index = Int(descriptor)
        if index >= registrations.count {
            registrations.append(contentsOf: repeatElement(nil, count: max(index + 1 - registrations.count, registrations.count)))
        }
        nextGeneration &+= 1
        let replacing = registrations[index] != nil
        if !replacing { registeredCount += 1 }
        registrations[index] = Registration(handler: handler, interest: interest, generation: nextGeneration)
        let token = EventLoop.token(descriptor, nextGeneration)
        // A descriptor closed without being deregistered has left the epoll set by itself, and
        // its number may come back as a new socket: the table's memory of it is then stale, so
        // each operation falls back to the other when the kernel says so.
        var result = tandem_epoll_ctl(epoll, replacing ? tandem_epoll_mod : tandem_epoll_add, descriptor, interest.rawValue, token)
        if result != 0, errno == EEXIST || errno == ENOENT {
            result = tandem_epoll_ctl(epoll, errno == EEXIST ? tandem_epoll_mod : tandem_epoll_add, descriptor, interest.rawValue, token)
        }
        if result != 0 { failures.append(token) }
    }

    /// Changes what `descriptor` is watched for; nothing when it is unchanged or not watched.
    /// Loop thread only.
    package func setInterest(_ descriptor: Int32, _ interest: Readiness) {
        preconditionInLoop()
        let index = Int(descriptor)
        guard index >= 0, index < registrations.count, let registration = registrations[index],
              registration.interest != interest else { return }
        registrations[index]!.interest = interest
        let token = EventLoop.token(descriptor, registration.generation)
        if tandem_epoll_ctl(epoll, tandem_epoll_mod, descriptor, interest.rawValue, token) != 0 {
            // Closed without being deregistered and reused: watch the descriptor now there.
            if errno != ENOENT || tandem_epoll_ctl(epoll, tandem_epoll_add, descriptor, interest.rawValue, token) != 0 {
                failures.append(token)
            }
        }
    }

    /// Stops watching `descriptor`. Loop thread only; call it before closing the descriptor.
    package func deregister(_ descriptor: Int32) {
        preconditionInLoop()
        let index = Int(descriptor)
        guard index >= 0, index < registrations.count, registrations[index] != nil else { return }
        // Fails only if the descriptor is already closed, which removed it from the set anyway.
        // Before the handler goes: dropping it may close the descriptor it holds.
        _ = tandem_epoll_ctl(epoll, tandem_epoll_del, descriptor, 0, 0)
        let dropped = registrations[index]
        registrations[index] = nil
        registeredCount -= 1
        withExtendedLifetime(dropped) {}
    }

    /// How many descriptors are watched. Loop thread only.
    package var registered: Int {
        preconditionInLoop()
        return registeredCount
    }

    // MARK: Tickers

    /// Calls `body` with the time on every tick until `removeTicker`. Loop thread only.
    @discardableResult
    package func addTicker(_ body: @escaping (LocalInstant) -> Void) -> UInt64 {
        preconditionInLoop()
        nextTicker += 1
        tickers[nextTicker] = body
        return nextTicker
    }

    /// Stops a ticker. Loop thread only.
    package func removeTicker(_ id: UInt64) {
        preconditionInLoop()
        tickers[id] = nil
    }

    // MARK: The loop

    private var isStopping: Bool { lifecycle.withLock { $0 == .stopping } }

    private func run() {
        nextTick = clock.instant() + tickInterval
        while !isStopping {
            runTasks()
            reportFailures()
            var now = clock.instant()
            runScheduled(dueAt: now)
            if now >= nextTick {
                nextTick = now + tickInterval
                for ticker in Array(tickers.values) { ticker(now) }
            }
            now = clock.instant()
            let busy = !tasks.withLock { $0.isEmpty } || !failures.isEmpty
            let deadline = min(nextTick, scheduled.nextDeadline ?? .distantFuture)
            wait(timeout: busy ? .zero : max(deadline - now, .zero))
        }
    }

    private func runTasks() {
        let batch = tasks.withLock { queue in
            defer { queue.removeAll(keepingCapacity: true) }
            return queue
        }
        for task in batch { task() }
    }

    private func wait(timeout span: TimeSpan) {
        // The system calls take the timeout in bare nanoseconds.
        let timeout = span.nanoseconds
        let count = ready.withUnsafeMutableBufferPointer { buffer in
            guard let timerDescriptor else { return tandem_epoll_pwait2(epoll, buffer.baseAddress, Int32(buffer.count), timeout) }
            // Without epoll_pwait2: the timer, armed for the timeout, wakes the wait to the ns.
            if timeout > 0 { _ = tandem_timerfd_arm(timerDescriptor, timeout) }
            return tandem_epoll_wait(epoll, buffer.baseAddress, Int32(buffer.count), timeout == 0 ? 0 : -1)
        }
        // A failure is EINTR (a signal): the next pass waits again.
        guard count > 0 else { return }
        for index in 0..<Int(count) {
            let event = ready[index]
            if event.token == EventLoop.wakeToken {
                drainWakeups()
                continue
            }
            if event.token == EventLoop.timerToken {
                drainTimer()
                continue
            }
            let failed = event.events & (tandem_epoll_err | tandem_epoll_hup) != 0
            dispatch(event.token, readable: event.events & tandem_epoll_in != 0, writable: event.events & tandem_epoll_out != 0, failed: failed)
        }
    }

    /// Calls the handler the token names, unless a handler run earlier in this pass has
    /// deregistered or replaced it.
    private func dispatch(_ token: UInt64, readable: Bool, writable: Bool, failed: Bool) {
        let index = Int(UInt32(truncatingIfNeeded: token))
        guard index < registrations.count, let registration = registrations[index],
              registration.generation == UInt32(truncatingIfNeeded: token >> 32) else { return }
        registration.handler(readable, writable, failed)
    }

    private func reportFailures() {
        guard !failures.isEmpty else { return }
        let batch = failures
        failures.removeAll()
        for token in batch { dispatch(token, readable: false, writable: false, failed: true) }
    }

    private static func token(_ descriptor: Int32, _ generation: UInt32) -> UInt64 {
        UInt64(generation) << 32 | UInt64(UInt32(bitPattern: descriptor))
    }

    func wake() {
        var one: UInt64 = 1
        // A full counter (never, in practice) means a wake-up is pending anyway.
        _ = Glibc.write(wakeDescriptor, &one, 8)
    }

    private func drainWakeups() {
        var count: UInt64 = 0
        _ = Glibc.read(wakeDescriptor, &count, 8)
    }

    private func drainTimer() {
        guard let timerDescriptor else { return }
        var expirations: UInt64 = 0
        _ = Glibc.read(timerDescriptor, &expirations, 8)
    }
}
