#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@testable import TandemMedia
import TandemClock

/// The player's lock (`ConditionLock`): its mutex inherits priority, read back two ways (the
/// attributes it was made with, and the kernel's side of it: the futex word of a locked
/// priority-inheriting mutex holds its owner's thread id), and its conditions still wake a
/// waiter on a broadcast and time a wait out at its deadline. No speed is asserted: waits are
/// bounded only so that a broken lock fails the test instead of hanging it.
@Suite struct ConditionLockIOTests {
    /// The futex word's bits that hold the owner's thread id (futex(2): `FUTEX_TID_MASK`).
    static let threadIDMask: Int32 = 0x3FFF_FFFF

    /// The calling thread's kernel id, from `/proc/thread-self` (a link to `PID/task/TID`; the
    /// toolchain's Glibc module does not export `gettid`).
    static func threadID() -> Int32 {
        let link = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? ""
        return link.split(separator: "/").last.flatMap { Int32($0) } ?? -1
    }

    /// A thread that must not wait (the sound output's) gets nil at once while the lock is held,
    /// and the body's result when it is free.
    @Test func aLockHeldIsNotWaitedFor() {
        let lock = ConditionLock()
        lock.lock()
        #expect(lock.withLockIfAvailable { 1 } == nil)
        lock.unlock()
        #expect(lock.withLockIfAvailable { 1 } == 1)
        // And it let go: a second taking finds it free again.
        #expect(lock.withLockIfAvailable { 2 } == 2)
    }

    @Test func theMutexInheritsPriority() {
        let lock = ConditionLock()
        #expect(lock.priorityProtocol == Int32(PTHREAD_PRIO_INHERIT))
        #expect(lock.futexWord == 0)
        lock.lock()
        // A plain mutex would hold 1 here: a priority-inheriting one names its owner, the
        // thread the kernel boosts while a higher-priority one waits.
        let word = lock.futexWord
        lock.unlock()
        #expect(word & Self.threadIDMask == Self.threadID(), "futex word \(word), thread \(Self.threadID())")
        #expect(lock.futexWord == 0)
    }

    @Test func aWaiterIsWokenByABroadcast() {
        let lock = ConditionLock()
        let changed = lock.condition(0)
        // Guarded by `lock`.
        final class Shared: @unchecked Sendable {
            var waiting = false
            var signalled = false
            var wokeSignalled = false
            var done = false
        }
        let shared = Shared()
        let waiter = Thread {
            lock.withLock {
                shared.waiting = true
                changed.broadcast()
                // Releases the lock only inside the wait: once the test holds it and reads
                // `waiting`, this thread is waiting.
                while !shared.signalled { changed.wait() }
                shared.wokeSignalled = shared.signalled
                shared.done = true
                changed.broadcast()
            }
        }
        waiter.start()
        let bound = HostInstant.now().nanoseconds + 30_000_000_000
        lock.withLock {
            while !shared.waiting, HostInstant.now().nanoseconds < bound { changed.wait(until: bound) }
            #expect(shared.waiting)
            #expect(!shared.done)
            shared.signalled = true
            changed.broadcast()
            while !shared.done, HostInstant.now().nanoseconds < bound { changed.wait(until: bound) }
            #expect(shared.done)
            #expect(shared.wokeSignalled)
        }
    }

    #if DEBUG
    @Test func aWaitWithoutTheLockHeldTraps() async {
        await #expect(processExitsWith: .failure) {
            let lock = ConditionLock()
            lock.condition(0).wait(until: HostInstant.now().nanoseconds + 1_000_000)
        }
    }
    #endif

    @Test func aTimedWaitReturnsAtItsDeadlineWhenNoOneSignals() {
        let lock = ConditionLock()
        let never = lock.condition(0)
        lock.withLock {
            let deadline = HostInstant.now().nanoseconds + 20_000_000
            var timedOut = false
            // A spurious wake-up returns early and not timed out: wait again.
            while !timedOut, HostInstant.now().nanoseconds < deadline + 30_000_000_000 { timedOut = never.wait(until: deadline) }
            #expect(timedOut)
            #expect(HostInstant.now().nanoseconds >= deadline)
            // A deadline already past times out at once.
            #expect(never.wait(until: deadline))
            // Each wait took the lock back before returning: this thread owns it.
            #expect(lock.futexWord & Self.threadIDMask == Self.threadID())
        }
        #expect(lock.futexWord == 0)
    }
}
