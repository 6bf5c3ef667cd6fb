import Foundation
import Testing
import TandemClock
@testable import TandemCluster
import TandemNATS
import TandemNet
import TandemHarness

/// `ClusterSessionTime` for real: a real `nats-server`, three relays' time services (real UDP
/// `TimeService`s on loopback) whose own clocks carry injected offsets of seconds and ±50 ppm of
/// drift, each relay's clock kept on the cluster's time by its shell. All in one process, so the
/// relays' cluster times are compared at one raw monotonic instant, exactly.
@Suite("Cluster time over NATS", .serialized, .enabled(if: NATSServerProcess.isAvailable, "nats-server is not installed"))
struct ClusterTimeProcessTests {
    /// One relay: its clock, its time service and its membership.
    final class Relay: Sendable {
        let name: String
        let clock: ClusterSessionClock
        let service: TimeService
        let nats: NATSConnection
        let time: ClusterSessionTime

        init(_ name: String, offsetSeconds: Double, driftPPM: Double, url: String, configuration: ClusterTimeConfiguration) async throws {
            self.name = name
            let epoch = SessionEpochClock(offset: 1 << 45).injecting(offset: Int64(offsetSeconds * 1e9), driftPPM: driftPPM)!
            clock = ClusterSessionClock(base: epoch)
            service = try TimeService(clock: clock, address: SocketAddress(host: "127.0.0.1", port: 0))
            service.start()
            nats = try await NATSConnection.connect(to: url)
            time = try await ClusterSessionTime.start(nats: nats, timeService: service.localAddress, clock: clock, id: name, configuration: configuration)
        }

        /// As a SIGKILL would leave it: no goodbye, the time service gone.
        func kill() async {
            await time.abandon()
            service.stop()
            await nats.close()
        }

        func stop() async {
            await time.stop()
            service.stop()
            await nats.close()
        }
    }

    /// Quick settings, so that the whole suite stays within seconds.
    static var configuration: ClusterTimeConfiguration {
        var configuration = ClusterTimeConfiguration()
        configuration.heartbeatInterval = 100_000_000
        configuration.livenessTimeout = 400_000_000
        configuration.discoveryWindow = 200_000_000
        configuration.synchronizationSpan = 500_000_000
        configuration.estimator.minimumDriftSpan = 500_000_000
        configuration.readyTimeout = 5_000_000_000
        return configuration
    }

    /// The agreement asserted between two relays' cluster times: each follower's time may be off
    /// the authority's by half the asymmetry of its loopback path (at most half its best round
    /// trip) plus its estimate's error bound, so two followers by twice that; 50 µs more covers
    /// the time service's scheduling on a loaded machine (the stamps are taken after `poll`
    /// wakes). Capped at 1 ms whatever the estimates claim, so a broken bound cannot pass.
    static func bound(_ relays: [Relay]) -> Int64 {
        let worst = relays.map { ($0.time.status.bestRoundTrip ?? 0) / 2 + $0.clock.errorBound() }.max() ?? 0
        return min(2 * worst + 50_000, 1_000_000)
    }

    /// Reads every relay's cluster time at one raw instant every 10 ms for `seconds`; returns the
    /// largest disagreement with `reference` and checks that no relay's time jumped.
    static func watch(_ relays: [Relay], against reference: Relay, for seconds: Double, slewRate: Double) async throws -> Int64 {
        let raw = SystemClock()
        var previous: (raw: Int64, times: [Int64])?
        var worst: Int64 = 0
        let end = raw.instant().nanoseconds + Int64(seconds * 1e9)
        while raw.instant().nanoseconds < end {
            let instant = raw.instant().nanoseconds
            let times = relays.map { $0.clock.localTime(atMonotonic: instant) }
            let referenceTime = reference.clock.localTime(atMonotonic: instant)
            worst = max(worst, times.map { abs($0 - referenceTime) }.max() ?? 0)
            if let previous {
                let elapsed = instant - previous.raw
                // Each relay runs at the authority's rate (50 ppm off raw, plus what its young
                // estimate of the drift has wrong: up to 100 ppm on a 0.5 s span of loopback
                // samples under load) and slews at most `slewRate` besides: 2.5 µs in 10 ms. A
                // step larger than that breaks this.
                let allowed = (150e-6 + slewRate) * Double(elapsed) + 2
                for (index, time) in times.enumerated() {
                    let moved = time - previous.times[index]
                    #expect(abs(Double(moved - elapsed)) <= allowed, "\(relays[index].name) moved \(moved - elapsed) ns off the raw \(elapsed) ns")
                }
            }
            previous = (instant, times)
            try await Task.sleep(for: .milliseconds(10))
        }
        return worst
    }

    /// Waits (bounded) until `condition` holds of the relays' statuses.
    static func await(_ what: @autoclosure () -> String, within seconds: Double, _ condition: @escaping @Sendable () -> Bool) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            guard Date() < deadline else { throw FixtureError("\(what()): not within \(seconds) s") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    @Test("three relays seconds and ±50 ppm apart keep one time; the authority killed, the rest stay within the bound with no step")
    func agreementAndFailover() async throws {
        let server = try NATSServerProcess()
        defer { server.stop() }
        let configuration = ClusterTimeProcessTests.configuration
        let first = try await Relay("r0", offsetSeconds: 2.5, driftPPM: 50, url: server.url, configuration: configuration)
        #expect(first.time.status.role == .authority)
        async let secondStart = Relay("r1", offsetSeconds: -4.75, driftPPM: -50, url: server.url, configuration: configuration)
        async let thirdStart = Relay("r2", offsetSeconds: 9.0, driftPPM: 30, url: server.url, configuration: configuration)
        let second = try await secondStart
        let third = try await thirdStart
        #expect(second.time.status.role == .following("r0"))
        #expect(third.time.status.role == .following("r0"))
        #expect(second.time.status.members == 3)

        // Let the drift fits settle past the first second, then measure.
        try await Task.sleep(for: .milliseconds(500))
        let agreed = try await ClusterTimeProcessTests.watch([second, third], against: first, for: 1.5, slewRate: configuration.slewRate)
        let bound = ClusterTimeProcessTests.bound([second, third])
        #expect(agreed <= bound, "followers off the authority by \(agreed) ns, bound \(bound) ns")
        // The estimates found the injected drifts: r1 runs 100 ppm slow of r0 (loosely: 2 s of
        // loopback samples on a loaded machine, whose round trips vary by 100s of µs).
        let drift = second.clock.mapping!.estimate.driftPPM
        #expect(abs(drift - 100) < 75, "r1's drift against r0: \(drift) ppm")

        // r0 dies silently; the older of r1 and r2 (both ready) takes over, the other follows it.
        let (next, last) = second.time.member.isOlder(than: third.time.member) ? (second, third) : (third, second)
        await first.kill()
        try await ClusterTimeProcessTests.await("\(next.name) the authority and \(last.name) following it (\(next.time.status), \(last.time.status))", within: 3) {
            next.time.status.role == .authority && last.time.status.role == .following(next.name)
        }
        #expect(last.time.status.authorityChanges == 2)
        let after = try await ClusterTimeProcessTests.watch([last], against: next, for: 2, slewRate: configuration.slewRate)
        let boundAfter = ClusterTimeProcessTests.bound([last]) + ClusterTimeProcessTests.bound([next])
        #expect(after <= boundAfter, "\(last.name) off \(next.name) by \(after) ns after the failover, bound \(boundAfter) ns")
        #expect(second.time.status.steps == 0 && third.time.status.steps == 0)
        for relay in [second, third] { await relay.stop() }
    }

    @Test("NATS lost and back: the follower keeps its authority over UDP meanwhile, with no step, and both hear each other again")
    func natsLostAndBack() async throws {
        let server = try NATSServerProcess()
        defer { server.stop() }
        let configuration = ClusterTimeProcessTests.configuration
        let first = try await Relay("r0", offsetSeconds: -3, driftPPM: -40, url: server.url, configuration: configuration)
        let second = try await Relay("r1", offsetSeconds: 6, driftPPM: 45, url: server.url, configuration: configuration)
        #expect(second.time.status.role == .following("r0"))
        server.kill()
        try await ClusterTimeProcessTests.await("r1 to notice NATS is gone", within: 3) { !second.time.status.connected }
        // Well past the liveness timeout: nobody is taken for dead while nobody can be heard.
        let apart = try await ClusterTimeProcessTests.watch([second], against: first, for: 1.5, slewRate: configuration.slewRate)
        #expect(second.time.status.role == .following("r0"))
        #expect(first.time.status.role == .authority)
        #expect(apart <= ClusterTimeProcessTests.bound([second]), "r1 off r0 by \(apart) ns while NATS was away")
        try server.start()
        try await ClusterTimeProcessTests.await("both back and hearing each other (\(first.time.status), \(second.time.status))", within: 8) {
            first.time.status.connected && second.time.status.connected && first.time.status.members == 2 && second.time.status.members == 2
        }
        let after = try await ClusterTimeProcessTests.watch([second], against: first, for: 0.5, slewRate: configuration.slewRate)
        #expect(after <= ClusterTimeProcessTests.bound([second]))
        #expect(second.time.status.role == .following("r0") && second.time.status.authorityChanges == 1)
        #expect(first.time.status.steps == 0 && second.time.status.steps == 0)
        await second.stop()
        await first.stop()
    }

    @Test("real relays wired as tandem serve --cluster wires them: a participant of the follower agrees with the authority")
    func participantAcrossRelays() async throws {
        let server = try NATSServerProcess()
        defer { server.stop() }
        let configuration = ClusterTimeProcessTests.configuration
        var relays: [(clock: ClusterSessionClock, server: RelayServer, nats: NATSConnection, time: ClusterSessionTime)] = []
        for (name, offset, drift) in [("a", 5.0, 50.0), ("b", -8.0, -50.0)] {
            let clock = ClusterSessionClock(base: SessionEpochClock.random().injecting(offset: Int64(offset * 1e9), driftPPM: drift)!)
            let relay = try RelayServer(address: try SocketAddress(host: "127.0.0.1", port: 0), clock: clock)
            let nats = try await NATSConnection.connect(to: server.url)
            let time = try await ClusterSessionTime.start(nats: nats, timeService: relay.address, clock: clock, id: name, configuration: configuration)
            relay.start()
            relays.append((clock, relay, nats, time))
        }
        defer { for relay in relays { relay.server.stop() } }
        #expect(relays[1].time.status.role == .following("a"))
        // A participant of b, on a clock of its own 2 s and 30 ppm off, probes b's shared port.
        let system = SystemClock()
        let local = SkewedClock(base: system, offset: 2_000_000_000, driftPPM: 30, origin: system.instant().nanoseconds)
        let participant = try ClockProber(server: relays[1].server.address, clock: local)
        participant.start()
        defer { participant.stop() }
        try await Task.sleep(for: .seconds(2))
        var worst: Int64 = 0
        for _ in 0..<50 {
            let raw = system.instant().nanoseconds
            let estimate = try #require(participant.sessionClock.sessionTime(atLocal: local.localTime(atBase: raw)))
            worst = max(worst, abs(estimate - relays[0].clock.localTime(atMonotonic: raw)))
            try await Task.sleep(for: .milliseconds(10))
        }
        // The participant's own error against b (half its best round trip plus its bound) and b's
        // against a (the same), doubled as `bound` does, 50 µs for scheduling; never above 1 ms.
        let participantBound = (participant.sessionClock.estimator.bestRoundTrip ?? 0) / 2
            + (participant.sessionClock.errorBound(atLocal: local.instant().nanoseconds) ?? 0)
        let relayBound = (relays[1].time.status.bestRoundTrip ?? 0) / 2 + relays[1].clock.errorBound()
        let allowed = min(2 * (participantBound + relayBound) + 50_000, 1_000_000)
        #expect(worst <= allowed, "a participant of b off a's time by \(worst) ns, bound \(allowed) ns")
        for relay in relays.reversed() {
            await relay.time.stop()
            await relay.nats.close()
        }
    }

    @Test("a relay whose authority's time service never answers fails to start, naming it; the others go on")
    func unreachableAuthority() async throws {
        let server = try NATSServerProcess()
        defer { server.stop() }
        var configuration = ClusterTimeProcessTests.configuration
        configuration.readyTimeout = 1_500_000_000
        let first = try await Relay("r0", offsetSeconds: 1, driftPPM: 0, url: server.url, configuration: configuration)
        first.service.stop()
        let nats = try await NATSConnection.connect(to: server.url)
        let clock = ClusterSessionClock(base: SessionEpochClock(offset: 0))
        let started = Date()
        let unused = try SocketAddress(host: "127.0.0.1", port: 9)
        do throws(ClusterTimeError) {
            _ = try await ClusterSessionTime.start(nats: nats, timeService: unused, clock: clock,
                                                   id: "r1", configuration: configuration)
            Issue.record("started without an answering authority")
        } catch {
            #expect(error.kind == .notSynchronized)
            #expect(error.reason.contains("r0") && error.reason.contains(first.service.localAddress.description), "\(error)")
        }
        #expect(Date().timeIntervalSince(started) < 3)
        #expect(first.time.status.role == .authority, "the authority is untouched")
        #expect(first.time.status.malformedAnnouncements == 0)
        // A garbage announcement is counted and ignored.
        try await nats.publish(configuration.subject, payload: Array("{\"v\":1}".utf8))
        try await nats.flush()
        try await ClusterTimeProcessTests.await("the garbage counted", within: 2) { first.time.status.malformedAnnouncements == 1 }
        #expect(first.time.status.role == .authority)
        await nats.close()
        await first.time.stop()
        await first.nats.close()
    }
}
