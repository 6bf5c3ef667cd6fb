import Synchronization
import Testing
@testable import TandemNet

/// A `leave()` or `end(reason:)` waits on a `DepartureWaiter`: it returns once, whether the
/// departure settles or whatever held the wait is dropped first (a loop reset with the job still
/// queued, as the suite's in-memory relays do at a test's end, left 18 such waits suspended for
/// good in one run, each reported as a leaked continuation).
@Suite(.timeLimit(.minutes(1))) struct DepartureWaiterTests {
    @Test func aWaitWhoseHolderIsDroppedReturns() async {
        // Nothing ever calls resume(): the job holding the waiter is dropped unrun.
        let held = Mutex<[@Sendable () -> Void]>([])
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waiter = DepartureWaiter(continuation)
            held.withLock { $0.append { waiter.resume() } }
            held.withLock { $0.removeAll() }
        }
        #expect(held.withLock { $0.isEmpty })
    }

    @Test func aWaitIsResumedOnceHoweverOftenItIsCalled() async {
        let calls = Mutex(0)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waiter = DepartureWaiter(continuation)
            // A second resume of a checked continuation would trap: these are no-ops.
            for _ in 0..<3 {
                waiter.resume()
                calls.withLock { $0 += 1 }
            }
        }
        #expect(calls.withLock { $0 } == 3)
    }
}
