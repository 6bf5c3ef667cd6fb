#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization
import Testing
import TandemClock
import TandemNet

@Suite struct ClockProberIOTests {
    @Test(arguments: [("127.0.0.1", 2.5, 0.0), ("::1", -7.25, 80.0)])
    func convergesOnAServiceWithAnInjectedOffset(host: String, offsetSeconds: Double, driftPPM: Double) throws {
        let system = SystemClock()
        let start = system.instant().nanoseconds
        // The service's clock is the session clock; the participant's is the system clock, itself
        // skewed by the drift, so the true offset is known exactly at every instant.
        let session = SkewedClock(base: system, offset: Int64(offsetSeconds * 1e9), driftPPM: 0, origin: start)
        let local = SkewedClock(base: system, offset: 0, driftPPM: driftPPM, origin: start)
        let service = try TimeService(clock: session, address: SocketAddress(host: host, port: 0))
        service.start()
        defer { service.stop() }
        let prober = try ClockProber(server: service.localAddress, clock: local)
        prober.start()
        defer { prober.stop() }

        // Wait, in bounded steps, for a few dozen samples (the burst and fast polling give them
        // within a second or two; a loaded machine may take longer, which is fine).
        var clock = prober.sessionClock
        for _ in 0..<400 where clock.estimator.keptCount < 30 {
            pause(milliseconds: 25)
            clock = prober.sessionClock
        }
        #expect(clock.estimator.keptCount >= 30)
        let base = system.instant().nanoseconds
        let estimated = try #require(clock.sessionTime(atLocal: local.localTime(atBase: base)))
        let truth = session.localTime(atBase: base)
        // Loopback has microseconds of asymmetry; a millisecond leaves room for a loaded machine
        // while still catching a wrong sign, a wrong clock or a step.
        #expect(abs(estimated - truth) < 1_000_000, "off by \(estimated - truth) ns")
        let statistics = try #require(clock.statistics(atLocal: local.instant().nanoseconds))
        #expect(statistics.bestRoundTrip > 0)
        #expect(statistics.bestRoundTrip <= statistics.medianRoundTrip)
        #expect(prober.pollingStatistics.answered == clock.estimator.keptCount + clock.estimator.rejectedCount)
        #expect(prober.sessionTime() != nil)
    }

    @Test func aProberOnAnEventLoopRunsThereAndLetsGoWhenStopped() throws {
        let system = SystemClock()
        let service = try TimeService(clock: system, address: SocketAddress(host: "127.0.0.1", port: 0))
        service.start()
        defer { service.stop() }
        let loop = try EventLoop(name: "tandem-test-probe")
        loop.start()
        defer { loop.stop() }
        // Where each sample was taken: on the loop's thread, or elsewhere.
        let taken = Mutex((onLoop: 0, elsewhere: 0))
        let prober = try ClockProber(server: service.localAddress, clock: system) { _, _, _ in
            let onLoop = loop.inLoop
            taken.withLock { if onLoop { $0.onLoop += 1 } else { $0.elsewhere += 1 } }
        }
        prober.start(on: loop)
        for _ in 0..<400 where prober.sessionClock.estimator.keptCount < 10 { pause(milliseconds: 25) }
        #expect(prober.sessionClock.estimator.keptCount >= 10)
        #expect(prober.sessionTime() != nil)

        prober.stop()
        // Once the loop has passed: the socket is no longer watched and no probe is pending.
        let watched = Mutex<Int?>(nil)
        let passed = DispatchSemaphore(value: 0)
        loop.execute {
            watched.withLock { $0 = loop.registered }
            passed.signal()
        }
        passed.wait()
        #expect(watched.withLock { $0 } == 0)
        let answered = prober.pollingStatistics.answered
        pause(milliseconds: 200)
        #expect(prober.pollingStatistics.answered == answered)
        let counts = taken.withLock { $0 }
        #expect(counts.onLoop >= 10 && counts.elsewhere == 0, "\(counts)")
    }

    @Test func keepsProbingWhileNothingAnswers() throws {
        // A bound socket that never replies: probes are counted lost, nothing crashes.
        let silent = try UDPSocket(boundTo: SocketAddress(host: "127.0.0.1", port: 0))
        var configuration = ClockPollingPolicy.Configuration()
        configuration.replyTimeout = 100_000_000
        let prober = try ClockProber(server: try silent.localAddress(), clock: SystemClock(), policy: configuration)
        prober.start()
        for _ in 0..<200 where prober.pollingStatistics.lost < 3 { pause(milliseconds: 10) }
        prober.stop()
        #expect(prober.pollingStatistics.lost >= 3)
        #expect(prober.pollingStatistics.answered == 0)
        #expect(prober.sessionTime() == nil)
    }
}

/// Sleeps the calling thread; the prober and service run on threads of their own.
func pause(milliseconds: Int) {
    var request = timespec(tv_sec: 0, tv_nsec: milliseconds * 1_000_000)
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 { request = remaining }
}
