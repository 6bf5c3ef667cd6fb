#if canImport(Glibc)
import Glibc
#endif
import Testing
import TandemHarness

/// Which real-time priority the test and bench sound server's main thread is given.
@Suite struct SoundServerPriorityTests {
    @Test func rootGivesTheMainThreadTheServersOwnRealtimePriority() {
        #expect(SoundServerPriority.mainThread(effectiveUser: 0, realtimeLimit: 0) == 5)
        #expect(SoundServerPriority.mainThread(effectiveUser: 0, realtimeLimit: rlim_t.max) == 5)
    }

    @Test(arguments: [(0, nil), (4, nil), (5, 5), (99, 5)] as [(rlim_t, Int32?)])
    func anotherUserNeedsAnRtprioLimitThatHigh(limit: rlim_t, priority: Int32?) {
        #expect(SoundServerPriority.mainThread(effectiveUser: 1000, realtimeLimit: limit) == priority)
    }

    @Test func theServerRunsAboveTheOutputsItServes() {
        // The built-in player's output thread asks for SCHED_FIFO 4.
        #expect(SoundServerPriority.mainThreadPriority > 4)
    }
}
