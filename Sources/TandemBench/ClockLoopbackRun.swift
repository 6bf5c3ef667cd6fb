#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import TandemClock
import TandemNet

/// A clock scenario on real UDP over loopback: a real time service on the system clock, and a
/// real prober whose local clock is the system clock with the scenario's offset and drift.
///
/// Because both clocks derive from one `CLOCK_MONOTONIC` reading, the true session time behind
/// every local reading is known exactly, and the error measured is the estimators' alone.
struct ClockLoopbackRun {
    let scenario: ClockScenario

    func run() throws -> ClockScenarioResult {
        let system = SystemClock()
        let service = try TimeService(clock: system, address: SocketAddress(host: "127.0.0.1", port: 0))
        service.start()
        defer { service.stop() }
        let start = system.instant().nanoseconds
        let local = SkewedClock(base: system, offset: scenario.clientOffset, driftPPM: scenario.clientDriftPPM, origin: start)
        let recorder = Mutex(ClockErrorRecorder(estimators: ClockErrorRecorder.standardLineup()))
        let prober = try ClockProber(server: service.localAddress, clock: local) { sample, _, now in
            recorder.withLock { $0.learn(sample, now: now) }
        }
        prober.start()
        var nextEvaluation = start + scenario.evaluationInterval
        while nextEvaluation <= start + scenario.duration {
            sleep(until: nextEvaluation)
            let sessionTime = system.instant().nanoseconds
            let localTime = local.localTime(atBase: sessionTime)
            recorder.withLock { $0.evaluate(elapsed: sessionTime - start, sessionTime: sessionTime, localTime: localTime) }
            nextEvaluation += scenario.evaluationInterval
        }
        prober.stop()
        let polling = prober.pollingStatistics
        return recorder.withLock { recorder in
            ClockScenarioResult(
                scenario: scenario, probesSent: polling.sent, samples: recorder.sampleCount,
                probesLost: polling.lost, estimators: ClockErrorRecorder.results(of: [recorder], in: scenario)
            )
        }
    }

    /// Sleeps until `CLOCK_MONOTONIC` reads `deadline` (an evaluation instant; how late it wakes
    /// does not matter, since the truth is read after waking).
    private func sleep(until deadline: Int64) {
        var request = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &request, nil) == EINTR {}
    }
}
