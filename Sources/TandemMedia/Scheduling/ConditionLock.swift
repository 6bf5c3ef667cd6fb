#if canImport(Glibc)
import Glibc
#endif
import CTandemSystem
import TandemClock

/// A mutex with condition variables that wait against CLOCK_MONOTONIC deadlines.
///
/// The player's decoding and presentation threads share their state under one of these. They
/// are POSIX threads, not tasks, so they may block here.
///
/// The mutex inherits priority (`PTHREAD_PRIO_INHERIT`): the presentation thread runs at a
/// real-time priority, the decoder and callers at an ordinary one, and on a busy machine an
/// ordinary thread preempted while it holds the lock would keep the presentation thread waiting
/// for it until the scheduler ran it again (frames presented late on one peer while every peer
/// had scheduled them on time). With inheritance, the holder runs at the waiter's priority until
/// it lets go.
///
/// Why unchecked: it is a lock, owning the mutex and its condition variables (`conditions`, made
/// with it, as many as `init(conditions:)` asks) through pointers, which the pthread calls alone
/// touch; those calls are what make it safe to share. A wait asserts that its caller holds the
/// mutex (`preconditionHeld()`), as `pthread_cond_wait` requires.
final class ConditionLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let conditions: UnsafeMutablePointer<pthread_cond_t>
    private let conditionCount: Int
    /// The protocol the mutex was made with, read back from its attributes
    /// (`pthread_mutexattr_getprotocol`): `PTHREAD_PRIO_INHERIT` (`ConditionLockTests`).
    let priorityProtocol: Int32

    /// A lock with `conditions` condition variables bound to it (`condition(_:)`).
    init(conditions: Int = 1) {
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_setprotocol(&attributes, Int32(PTHREAD_PRIO_INHERIT))
        var chosen: Int32 = -1
        pthread_mutexattr_getprotocol(&attributes, &chosen)
        priorityProtocol = chosen
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        conditionCount = max(conditions, 0)
        self.conditions = .allocate(capacity: conditionCount)
        var conditionAttributes = pthread_condattr_t()
        pthread_condattr_init(&conditionAttributes)
        pthread_condattr_setclock(&conditionAttributes, CLOCK_MONOTONIC)
        for index in 0..<conditionCount { pthread_cond_init(self.conditions + index, &conditionAttributes) }
        pthread_condattr_destroy(&conditionAttributes)
    }

    /// The mutex's futex word as glibc keeps it (`__data.__lock`), for tests: a
    /// priority-inheriting mutex holds its owner's thread id there while locked (futex(2),
    /// "Priority-inheritance futexes": the kernel boosts that thread), where a plain one holds
    /// 1 or 2; 0 when free. Read it only with the lock held by the reader, or free.
    var futexWord: Int32 { mutex.pointee.__data.__lock }

    deinit {
        for index in 0..<conditionCount { pthread_cond_destroy(conditions + index) }
        conditions.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }

    func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body()
    }

    /// Runs `body` with the lock held if the lock is free now; nil, at once, when it is held
    /// (by another thread, or by this one). For a thread that must never wait on the others'
    /// critical sections: however short they are meant to be, a holder can be held up inside
    /// one (by a lock that inherits nothing, or by the kernel), and inheritance cannot hurry it.
    func withLockIfAvailable<Result>(_ body: () throws -> Result) rethrows -> Result? {
        guard pthread_mutex_trylock(mutex) == 0 else { return nil }
        defer { unlock() }
        return try body()
    }

    /// Traps, in debug builds, unless the calling thread holds the lock: the priority-inheriting
    /// mutex keeps its owner's thread id in its futex word (`futexWord`), below the two flag bits
    /// futex(2) puts above it. (A mutex the system made without inheritance is not checked.)
    func preconditionHeld(file: StaticString = #fileID, line: UInt = #line) {
        assert(priorityProtocol != Int32(PTHREAD_PRIO_INHERIT) || futexWord & 0x3FFF_FFFF == tandem_thread_id(),
               "ConditionLock: a wait without the lock held", file: file, line: line)
    }

    /// Condition variable `index` (from 0, below the count given to `init(conditions:)`).
    func condition(_ index: Int) -> Condition {
        precondition(index >= 0 && index < conditionCount, "ConditionLock has \(conditionCount) conditions, not \(index + 1)")
        return Condition(lock: self, index: index)
    }

    /// A condition variable bound to the lock.
    struct Condition: Sendable {
        let lock: ConditionLock
        let index: Int

        /// Waits, with the lock held, until signalled (or spuriously woken).
        func wait() {
            lock.preconditionHeld()
            pthread_cond_wait(lock.conditions + index, lock.mutex)
        }

        /// Waits, with the lock held, until signalled or until the monotonic clock reads
        /// `deadline`; returns whether it returned for the deadline (`ETIMEDOUT`).
        @discardableResult
        func wait(until deadline: Int64) -> Bool {
            lock.preconditionHeld()
            var spec = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
            return pthread_cond_timedwait(lock.conditions + index, lock.mutex, &spec) == ETIMEDOUT
        }

        /// Wakes every waiter.
        func broadcast() {
            pthread_cond_broadcast(lock.conditions + index)
        }
    }
}
