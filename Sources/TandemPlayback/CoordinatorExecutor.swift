import Dispatch
import Synchronization
import TandemClock
import TandemNet

/// The serial executor one coordination of a `PlaybackCoordinator` runs on, as the shell sees
/// it: a `CoordinatorScheduler` that can also tell whether the caller runs on it now, so that
/// work already there (a record the session's loop delivers) runs at once instead of being
/// queued behind itself, and that asserts the confinement it documents.
protocol CoordinatorExecutor: CoordinatorScheduler {
    /// Whether the caller runs on the executor now; nil when the executor cannot tell (a
    /// scheduler a program gave, a dispatch queue): work is then always handed to it.
    var isCurrent: Bool? { get }
    /// Traps, in debug builds, when the executor can tell that the caller runs elsewhere.
    func preconditionCurrent(file: StaticString, line: UInt)
    /// The event loop the executor is, when it is one: a caller elsewhere can then hop onto it
    /// and wait for an answer (`SerialEventLoop.runAndWait`); nil for a queue or a program's
    /// scheduler, which cannot tell whether the caller is already on it.
    var loop: (any SerialEventLoop)? { get }
}

extension CoordinatorExecutor {
    /// No loop unless the executor is one.
    var loop: (any SerialEventLoop)? { nil }
}

extension CoordinatorExecutor {
    /// `preconditionCurrent(file:line:)` naming the caller.
    func preconditionCurrent(_ file: StaticString = #fileID, _ line: UInt = #line) {
        preconditionCurrent(file: file, line: line)
    }
}

/// A coordinator on a serial event loop: a session's (the participant's loop, where its link and
/// its session run), or a test's embedded one. Time is the loop's clock, which for a session's
/// loop is the host's raw monotonic clock (`SystemClock`): a host instant is what it is on a
/// dispatch queue. A test's loop reads virtual time, which then stands for the host's.
struct LoopScheduler: CoordinatorExecutor {
    /// The loop everything runs on.
    let eventLoop: any SerialEventLoop

    init(loop: any SerialEventLoop) { eventLoop = loop }

    var loop: (any SerialEventLoop)? { eventLoop }

    var now: HostInstant { HostInstant(nanoseconds: eventLoop.now.nanoseconds) }
    var isCurrent: Bool? { eventLoop.inLoop }

    func execute(_ work: @escaping @Sendable () -> Void) { eventLoop.execute(work) }

    func schedule(at instant: HostInstant, _ work: @escaping @Sendable () -> Void) -> any CoordinatorCancellable {
        LoopCancellable(task: eventLoop.schedule(at: LocalInstant(nanoseconds: instant.nanoseconds), work))
    }

    func preconditionCurrent(file: StaticString, line: UInt) {
        eventLoop.preconditionInLoop("PlaybackCoordinator", file: file, line: line)
    }

    private struct LoopCancellable: CoordinatorCancellable {
        let task: ScheduledTask
        func cancel() { task.cancel() }
    }
}

/// A serial dispatch queue on the host's raw monotonic clock: the executor of a coordination
/// medium's coordinators (one queue a medium, shared by the coordinators connected to it), and
/// of a channel that names no loop.
final class QueueScheduler: CoordinatorExecutor {
    private let queue: DispatchQueue
    private let clock = SystemClock()

    /// A scheduler on a new serial queue labelled `label`.
    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    var now: HostInstant { HostInstant(nanoseconds: clock.instant().nanoseconds) }
    /// A queue cannot tell cheaply: work is always queued, so that a medium's lock is never held
    /// across a coordinator's step.
    var isCurrent: Bool? { nil }

    func execute(_ work: @escaping @Sendable () -> Void) {
        queue.async(execute: work)
    }

    func schedule(at instant: HostInstant, _ work: @escaping @Sendable () -> Void) -> any CoordinatorCancellable {
        CancellableWork.after(instant - now, on: queue, work)
    }

    func preconditionCurrent(file: StaticString, line: UInt) {}
}

/// Work handed to a dispatch queue that can be called off until it starts.
private final class CancellableWork: CoordinatorCancellable {
    private let cancelled = Atomic(false)

    func cancel() { cancelled.store(true, ordering: .relaxed) }

    /// Runs `work` on `queue` once `delay` has passed, unless called off first.
    static func after(_ delay: TimeSpan, on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) -> CancellableWork {
        let handle = CancellableWork()
        let nanoseconds = Int(clamping: max(0, delay.nanoseconds))
        queue.asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) {
            if !handle.cancelled.load(ordering: .relaxed) { work() }
        }
        return handle
    }
}

/// The scheduler a program or a test gave the coordinator, which says nothing of where its
/// caller runs: work is always handed to it, as its protocol promises to run it serially.
struct GivenScheduler: CoordinatorExecutor {
    let base: any CoordinatorScheduler

    var now: HostInstant { base.now }
    var isCurrent: Bool? { nil }
    func execute(_ work: @escaping @Sendable () -> Void) { base.execute(work) }
    func schedule(at instant: HostInstant, _ work: @escaping @Sendable () -> Void) -> any CoordinatorCancellable {
        base.schedule(at: instant, work)
    }
    func preconditionCurrent(file: StaticString, line: UInt) {}
}

/// What a coordinator that coordinates with nothing yet shows as its scheduler: the host's raw
/// monotonic clock, with work run at once on the caller's thread (a step then finds no
/// coordination and does nothing) and scheduled work on the global dispatch queue. It creates
/// no queue and no thread.
struct IdleScheduler: CoordinatorScheduler {
    var now: HostInstant { HostInstant(nanoseconds: SystemClock().instant().nanoseconds) }
    func execute(_ work: @escaping @Sendable () -> Void) { work() }
    func schedule(at instant: HostInstant, _ work: @escaping @Sendable () -> Void) -> any CoordinatorCancellable {
        CancellableWork.after(instant - now, on: .global(), work)
    }
}
