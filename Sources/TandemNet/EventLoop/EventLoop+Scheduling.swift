import Synchronization
import TandemClock

/// Orders tasks due at one instant by when they were scheduled, whichever thread scheduled them.
private let scheduledTaskSequence = Atomic<UInt64>(0)

/// A one-shot task on a `SerialEventLoop` (the real `EventLoop` or a test's embedded one), due
/// at an instant of the loop's clock; cancel it from any thread until it runs.
///
/// Running and cancelling both take the task's body out under its lock, so exactly one of them
/// happens, and what the body captured is released as soon as either does.
public final class ScheduledTask: Sendable {
    /// When the task is due, on the loop's clock.
    public let due: LocalInstant
    fileprivate let sequence: UInt64
    private let body: Mutex<(@Sendable () -> Void)?>

    package init(due: LocalInstant, body: @escaping @Sendable () -> Void) {
        self.due = due
        sequence = scheduledTaskSequence.add(1, ordering: .relaxed).newValue
        self.body = Mutex(body)
    }

    /// When the task is due, on the loop's clock, in bare nanoseconds.
    @available(*, deprecated, renamed: "due")
    public var deadline: Int64 { due.nanoseconds }

    /// Stops the task from running; true if it had neither run nor been cancelled yet.
    @discardableResult
    public func cancel() -> Bool { take() != nil }

    /// Whether the task is still to run (neither run nor cancelled).
    public var isPending: Bool { body.withLock { $0 != nil } }

    fileprivate func take() -> (@Sendable () -> Void)? {
        body.withLock { body in
            defer { body = nil }
            return body
        }
    }
}

/// The loop's scheduled tasks: a binary min-heap by deadline, then by the order they were
/// scheduled in, so that tasks due at one instant run in that order. Cancelled tasks stay until
/// they surface or until a compaction drops them, which runs when the heap has doubled since the
/// last, so that cancelling stays O(1) and the heap's size stays within twice the live tasks.
package struct ScheduledTaskQueue: Sendable {
    private var heap: [ScheduledTask] = []
    private var compactAt = 1024

    /// An empty queue.
    package init() {}

    /// How many tasks the heap holds, cancelled ones included.
    package var count: Int { heap.count }

    /// The earliest deadline among the tasks held (a cancelled one may wake the loop once, early).
    package var nextDeadline: LocalInstant? { heap.first?.due }

    /// Adds `task`.
    package mutating func insert(_ task: ScheduledTask) {
        if heap.count >= compactAt { compact() }
        heap.append(task)
        siftUp(heap.count - 1)
    }

    /// Removes and returns the bodies of the tasks due at `now`, in order, skipping cancelled ones.
    package mutating func popDue(at now: LocalInstant) -> [@Sendable () -> Void] {
        var due: [@Sendable () -> Void] = []
        while let first = heap.first, first.due <= now {
            removeFirst()
            if let body = first.take() { due.append(body) }
        }
        return due
    }

    /// Removes and returns the first task due at `now` that is still pending, with its deadline,
    /// skipping cancelled ones: one at a time, for a loop that re-reads the queue after each task
    /// (what an embedded loop does, so that a task scheduled by a task keeps the order).
    package mutating func popFirst(dueAt now: LocalInstant) -> (due: LocalInstant, body: @Sendable () -> Void)? {
        while let first = heap.first, first.due <= now {
            removeFirst()
            if let body = first.take() { return (first.due, body) }
        }
        return nil
    }

    /// The earliest deadline of a task still pending, dropping cancelled ones at the top.
    package mutating func nextPendingDeadline() -> LocalInstant? {
        while let first = heap.first, !first.isPending { removeFirst() }
        return heap.first?.due
    }

    /// Drops every task.
    package mutating func removeAll() {
        for task in heap { _ = task.take() }
        heap.removeAll()
    }

    private mutating func compact() {
        heap.removeAll { !$0.isPending }
        // Any array ordered by a valid heap order is rebuilt bottom-up in O(n).
        for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
        compactAt = max(1024, heap.count * 2)
    }

    private mutating func removeFirst() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        siftDown(0)
    }

    private static func precedes(_ a: ScheduledTask, _ b: ScheduledTask) -> Bool {
        a.due != b.due ? a.due < b.due : a.sequence < b.sequence
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard ScheduledTaskQueue.precedes(heap[child], heap[parent]) else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { return }
            var smallest = left
            if left + 1 < heap.count, ScheduledTaskQueue.precedes(heap[left + 1], heap[left]) { smallest = left + 1 }
            guard ScheduledTaskQueue.precedes(heap[smallest], heap[parent]) else { return }
            heap.swapAt(smallest, parent)
            parent = smallest
        }
    }
}

extension EventLoop {
    /// Runs `task` on the loop's thread once the loop's clock reads `deadline`, to the nanosecond
    /// as the kernel wakes it; a deadline already past runs on the next pass. Tasks due at one
    /// instant run in the order they were scheduled. Any thread; cancel with the handle.
    @discardableResult
    package func schedule(at deadline: LocalInstant, _ task: @escaping @Sendable () -> Void) -> ScheduledTask {
        let scheduledTask = ScheduledTask(due: deadline, body: task)
        if inLoop {
            scheduled.insert(scheduledTask)
        } else {
            execute { [self] in scheduled.insert(scheduledTask) }
        }
        return scheduledTask
    }

    /// Runs the scheduled tasks due at `now`: those already due when the pass began, so that a
    /// task rescheduling itself for "now" runs on the next pass, not forever in this one.
    func runScheduled(dueAt now: LocalInstant) {
        for body in scheduled.popDue(at: now) { body() }
    }
}
