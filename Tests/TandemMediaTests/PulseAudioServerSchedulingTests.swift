#if canImport(Glibc)
import Glibc
#endif
import Testing
import TandemHarness

/// Which real-time priority the test and bench sound server's main thread is given.
@Suite struct PulseAudioServerSchedulingTests {
    @Test func rootGivesTheMainThreadTheServersOwnRealtimePriority() {
        #expect(PulseAudioServer.mainThreadScheduling(effectiveUser: 0, realtimeLimit: 0) == 5)
        #expect(PulseAudioServer.mainThreadScheduling(effectiveUser: 0, realtimeLimit: rlim_t.max) == 5)
    }

    @Test(arguments: [(0, nil), (4, nil), (5, 5), (99, 5)] as [(rlim_t, Int32?)])
    func anotherUserNeedsAnRtprioLimitThatHigh(limit: rlim_t, priority: Int32?) {
        #expect(PulseAudioServer.mainThreadScheduling(effectiveUser: 1000, realtimeLimit: limit) == priority)
    }

    @Test func theServerRunsAboveTheOutputsItServes() {
        // The built-in player's output thread asks for SCHED_FIFO 4.
        #expect(PulseAudioServer.mainThreadPriority > 4)
    }
}
