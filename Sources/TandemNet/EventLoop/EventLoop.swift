#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import Synchronization
import TandemClock

/// A thread that waits on many sockets with `poll` and runs what they are ready for, plus tasks
/// handed to it from other threads and a periodic tick: the shell that carries out the relay's
/// and the links' pure cores.
///
/// Everything registered runs on the loop's thread, one thing at a time, so the state that
/// handlers touch needs no lock; other threads reach it only through `execute`. That confinement
/// is why the class is `@unchecked Sendable`. The shape follows swift-nio's `SelectableEventLoop`
/// (tasks, a wake-up descriptor, then readiness), with `poll` in place of epoll because Swift's
/// Glibc module does not import `sys/epoll.h`.
final class EventLoop: @unchecked Sendable {
    /// What a descriptor became ready for.
    struct Readiness: OptionSet {
        let rawValue: Int16
        static let readable = Readiness(rawValue: Int16(POLLIN))
        static let writable = Readiness(rawValue: Int16(POLLOUT))
    }

    /// Called on the loop's thread with what the descriptor is ready for; `failed` when the
    /// descriptor reported an error or hang-up (a read then tells which).
    typealias Handler = (_ readable: Bool, _ writable: Bool, _ failed: Bool) -> Void

    /// The clock that ticks give their handlers.
    let clock: any LocalClock
    /// How often tickers run, in nanoseconds.
    let tickInterval: Int64
    private let name: String
    private let wakeup: WakeupChannel
    private let tasks = Mutex<[@Sendable () -> Void]>([])
    private let lifecycle = Mutex(Lifecycle.idle)
    private let finished = DispatchSemaphore(value: 0)
    private let threadID = Mutex<pthread_t?>(nil)

    // Confined to the loop's thread.
    private var entries: [pollfd] = []
    private var handlers: [Int32: Handler] = [:]
    private var tickers: [UInt64: (Int64) -> Void] = [:]
    private var nextTicker: UInt64 = 0
    private var nextTick: Int64 = 0

    private enum Lifecycle { case idle, running, stopping, stopped }

    /// A loop named `name` (the thread's name), ticking every `tickInterval` nanoseconds.
    init(name: String, clock: any LocalClock = SystemClock(), tickInterval: Int64 = 20_000_000) throws(SystemCallError) {
        self.name = name
        self.clock = clock
        self.tickInterval = tickInterval
        wakeup = try WakeupChannel()
    }

    /// Starts the loop's thread. Calling it again does nothing.
    func start() {
        let shouldStart = lifecycle.withLock { state in
            guard state == .idle else { return false }
            state = .running
            return true
        }
        guard shouldStart else { return }
        let thread = Thread { [self] in
            threadID.withLock { $0 = pthread_self() }
            run()
            finished.signal()
        }
        thread.name = name
        // The loop's own work is small; the default 8 MiB stack would only cost address space.
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Stops the loop and waits for its thread; tasks still queued are dropped. Not from the loop.
    func stop() {
        let wasRunning = lifecycle.withLock { state in
            defer { if state != .stopped { state = .stopping } }
            return state == .running
        }
        guard wasRunning else { return }
        wakeup.wake()
        finished.wait()
        lifecycle.withLock { $0 = .stopped }
    }

    /// Drops every handler, ticker and queued task, so that what they hold can go. Only once
    /// `stop()` has returned (the thread is gone); the loop cannot run again.
    func reset() {
        precondition(lifecycle.withLock { $0 == .stopped || $0 == .idle }, "reset a loop only once it has stopped")
        handlers.removeAll()
        entries.removeAll()
        tickers.removeAll()
        tasks.withLock { $0.removeAll() }
    }

    /// Whether the caller runs on the loop's thread.
    var inLoop: Bool {
        threadID.withLock { id in id.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    /// Runs `task` on the loop's thread, after the tasks queued before it.
    func execute(_ task: @escaping @Sendable () -> Void) {
        let first = tasks.withLock { queue in
            queue.append(task)
            return queue.count == 1
        }
        // One wake-up per batch: a non-empty queue already has one pending.
        if first { wakeup.wake() }
    }

    /// Watches `descriptor` for `interest`. Loop thread only.
    func register(_ descriptor: Int32, interest: Readiness, handler: @escaping Handler) {
        handlers[descriptor] = handler
        entries.removeAll { $0.fd == descriptor }
        entries.append(pollfd(fd: descriptor, events: interest.rawValue, revents: 0))
    }

    /// Changes what `descriptor` is watched for. Loop thread only.
    func setInterest(_ descriptor: Int32, _ interest: Readiness) {
        for index in entries.indices where entries[index].fd == descriptor {
            entries[index].events = interest.rawValue
        }
    }

    /// Stops watching `descriptor`. Loop thread only; call it before closing the descriptor.
    func deregister(_ descriptor: Int32) {
        handlers[descriptor] = nil
        entries.removeAll { $0.fd == descriptor }
    }

    /// Calls `body` with the time on every tick until `removeTicker`. Loop thread only.
    @discardableResult
    func addTicker(_ body: @escaping (Int64) -> Void) -> UInt64 {
        nextTicker += 1
        tickers[nextTicker] = body
        return nextTicker
    }

    /// Stops a ticker. Loop thread only.
    func removeTicker(_ id: UInt64) { tickers[id] = nil }

    private var isStopping: Bool { lifecycle.withLock { $0 == .stopping } }

    private func run() {
        nextTick = clock.now() + tickInterval
        while !isStopping {
            runTasks()
            var now = clock.now()
            if now >= nextTick {
                nextTick = now + tickInterval
                for ticker in Array(tickers.values) { ticker(now) }
                now = clock.now()
            }
            let timeout = tasks.withLock { $0.isEmpty } ? max(nextTick - now, 0) : 0
            poll(timeout: timeout)
        }
    }

    private func runTasks() {
        let batch = tasks.withLock { queue in
            defer { queue.removeAll(keepingCapacity: true) }
            return queue
        }
        for task in batch { task() }
    }

    private func poll(timeout: Int64) {
        var waiting = entries
        waiting.append(pollfd(fd: wakeup.readDescriptor, events: Int16(POLLIN), revents: 0))
        // Round up, so that a tick is never woken for early and spun on.
        let milliseconds = Int32(min((timeout + 999_999) / 1_000_000, 1_000))
        guard let ready = try? SystemCall.run("poll", { Glibc.poll(&waiting, nfds_t(waiting.count), milliseconds) }),
              ready > 0 else { return }
        for entry in waiting where entry.revents != 0 {
            if entry.fd == wakeup.readDescriptor {
                drainWakeups()
                continue
            }
            // A handler run earlier in this pass may have deregistered this descriptor.
            guard let handler = handlers[entry.fd] else { continue }
            let failed = entry.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0
            handler(entry.revents & Int16(POLLIN) != 0, entry.revents & Int16(POLLOUT) != 0, failed)
        }
    }

    private func drainWakeups() {
        var scratch = [UInt8](repeating: 0, count: 64)
        let descriptor = wakeup.readDescriptor
        while let received = try? SystemCall.run("recv", { recv(descriptor, &scratch, scratch.count, 0) }), received > 0 {}
    }
}
