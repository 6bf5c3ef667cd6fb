#if canImport(Glibc)
import Glibc
#endif
import TandemClock

/// A mutex with condition variables that wait against CLOCK_MONOTONIC deadlines.
///
/// The player's decoding and presentation threads share their state under one of these. They
/// are POSIX threads, not tasks, so they may block here.
///
/// The mutex inherits priority (`PTHREAD_PRIO_INHERIT`): the presentation thread runs at a
/// real-time priority, the decoder and callers at an ordinary one, and on a busy machine an
/// ordinary thread preempted while it holds the lock kept the presentation thread waiting for
/// it until the scheduler ran it again (frames presented 2 to 28 ms late on one peer of eight in
/// `tandem bench all --scenario eight-peers`, while every peer had scheduled them within
/// 0.22 ms of each other). With inheritance, the holder runs at the waiter's priority until it
/// lets go.
final class ConditionLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    /// The protocol the mutex was made with, read back from its attributes
    /// (`pthread_mutexattr_getprotocol`): `PTHREAD_PRIO_INHERIT` (`ConditionLockTests`).
    let priorityProtocol: Int32

    init() {
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_setprotocol(&attributes, Int32(PTHREAD_PRIO_INHERIT))
        var chosen: Int32 = -1
        pthread_mutexattr_getprotocol(&attributes, &chosen)
        priorityProtocol = chosen
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
    }

    /// The mutex's futex word as glibc keeps it (`__data.__lock`), for tests: a
    /// priority-inheriting mutex holds its owner's thread id there while locked (futex(2),
    /// "Priority-inheritance futexes": the kernel boosts that thread), where a plain one holds
    /// 1 or 2; 0 when free. Read it only with the lock held by the reader, or free.
    var futexWord: Int32 { mutex.pointee.__data.__lock }

    deinit {
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

    /// A condition variable bound to this lock.
    final class Condition: @unchecked Sendable {
        private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
        private let lock: ConditionLock

        init(_ lock: ConditionLock) {
            self.lock = lock
            var attributes = pthread_condattr_t()
            pthread_condattr_init(&attributes)
            pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
            pthread_cond_init(condition, &attributes)
            pthread_condattr_destroy(&attributes)
        }

        deinit {
            pthread_cond_destroy(condition)
            condition.deallocate()
        }

        /// Waits, with the lock held, until signalled (or spuriously woken).
        func wait() {
            pthread_cond_wait(condition, lock.mutex)
        }

        /// Waits, with the lock held, until signalled or until the monotonic clock reads
        /// `deadline`; returns whether it returned for the deadline (`ETIMEDOUT`).
        @discardableResult
        func wait(until deadline: Nanoseconds) -> Bool {
            var spec = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
            return pthread_cond_timedwait(condition, lock.mutex, &spec) == ETIMEDOUT
        }

        /// Wakes every waiter.
        func broadcast() {
            pthread_cond_broadcast(condition)
        }
    }
}
