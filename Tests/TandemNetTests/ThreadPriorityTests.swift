#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import TandemNet
import Testing

/// `ThreadPriority` changes the calling thread only, or says why it may not.
@Suite struct ThreadPriorityIOTests {
    /// Runs `body` on a fresh thread and returns what it returned.
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
        let result = Mutex<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            result.withLock { $0 = body() }
            done.signal()
        }
        thread.start()
        done.wait()
        return result.withLock { $0! }
    }

    static func niceness() -> Int32 {
        errno = 0
        return getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
    }

    @Test func highLowersTheCallingThreadsNiceOnlyOrFailsWithTheCallsName() {
        let before = Self.niceness()
        let outcome = Self.onThread { () -> (nice: Int32, error: String?) in
            do throws(SystemCallError) {
                try ThreadPriority.high.applyToCurrentThread()
                return (Self.niceness(), nil)
            } catch {
                return (Self.niceness(), "\(error)")
            }
        }
        if let error = outcome.error {
            // Without CAP_SYS_NICE: refused, with the call named, and the thread as it was.
            #expect(error.contains("setpriority"))
            #expect(outcome.nice == before)
        } else {
            #expect(outcome.nice == -10)
        }
        // The thread that asked is the only one changed.
        #expect(Self.niceness() == before)
    }

    @Test func normalChangesNothing() throws {
        let before = Self.niceness()
        let after = Self.onThread { () -> Int32? in
            (try? ThreadPriority.normal.applyToCurrentThread()).map { Self.niceness() }
        }
        #expect(after == before)
    }
}
