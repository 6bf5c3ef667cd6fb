import Foundation
import TandemClock
import TandemCluster
import TandemNATS
import TandemNet
import TandemHarness

/// The clock part of `tandem bench cluster`: a real `nats-server` and three real relays
/// (`RelayServer`, each on a `ClusterSessionClock` whose own clock carries an injected offset of
/// seconds and ±50 ppm of drift, as `tandem serve --clock-offset S --clock-drift-ppm PPM` makes)
/// keeping one session time through `ClusterSessionTime`, with one participant per relay
/// (`ClockProber` on a clock of its own, skewed too) synchronising with its relay as `tandem join`
/// does.
///
/// Everything runs in one process and every clock derives from one `CLOCK_MONOTONIC`, so every
/// error is read exactly, at one raw instant: each relay's cluster time against the authority's,
/// each participant's estimate of session time against its own relay's (what one relay alone
/// gives) and against the authority's (what a participant on another relay has to agree with).
/// With `failover`, the authority is then killed (no goodbye) halfway, and the same is read among
/// the survivors, with the largest change of any relay's offset between two readings 10 ms apart:
/// a step would show there.
public struct ClusterClockBenchmark: Sendable {
    /// How long to measure, in seconds, after the warm-up (half before the failover, half after).
    public var seconds: Double
    /// Whether to kill the authority halfway.
    public var failover: Bool
    /// The relays' injected errors: offset (s) and drift (ppm), the first being the authority.
    public var relayErrors: [(offset: Double, driftPPM: Double)] = [(2.5, 50), (-4.75, -50), (9.0, 30)]
    /// The participants' own clock errors, one per relay.
    public var participantErrors: [(offset: Double, driftPPM: Double)] = [(-1.25, 40), (3.5, -35), (0.75, 15)]

    /// A benchmark of `seconds`.
    public init(seconds: Double = 10, failover: Bool = true) {
        self.seconds = seconds
        self.failover = failover
    }

    private final class Relay: Sendable {
        let name: String
        let clock: ClusterSessionClock
        let server: RelayServer
        let nats: NATSConnection
        let time: ClusterSessionTime

        init(name: String, clock: ClusterSessionClock, server: RelayServer, nats: NATSConnection, time: ClusterSessionTime) {
            self.name = name
            self.clock = clock
            self.server = server
            self.nats = nats
            self.time = time
        }
    }

    private struct Participant {
        let relay: Int
        let clock: SkewedClock<SystemClock>
        let prober: ClockProber

        func sessionTime(atMonotonic raw: Int64) -> Int64? {
            prober.sessionClock.sessionTime(atLocal: LocalInstant(nanoseconds: clock.localTime(atBase: raw)))?.nanoseconds
        }
    }

    /// Runs it; `progress` hears what it is doing.
    public func run(progress: @Sendable (String) -> Void = { _ in }) async throws -> ClusterClockReport {
        progress("starting nats-server")
        let server = try NATSServerProcess()
        defer { server.stop() }
        var relays: [Relay] = []
        var participants: [Participant] = []
        defer {
            for participant in participants { participant.prober.stop() }
            for relay in relays { relay.server.stop() }
        }
        for (index, error) in relayErrors.enumerated() {
            progress("starting relay-\(index) (clock \(error.offset) s and \(error.driftPPM) ppm off)")
            relays.append(try await startRelay(index: index, error: error, url: server.url))
        }
        let system = SystemClock()
        for (index, error) in participantErrors.prefix(relays.count).enumerated() {
            let clock = SkewedClock(base: system, offset: Int64(error.offset * 1e9), driftPPM: error.driftPPM, origin: system.instant().nanoseconds)
            let prober = try ClockProber(server: relays[index].server.address, clock: clock)
            prober.start()
            participants.append(Participant(relay: index, clock: clock, prober: prober))
        }
        progress("warming up for 3 s (participants synchronising)")
        try await Task.sleep(for: .seconds(3))
        let before = try await measure(relays: relays, participants: participants, authority: 0, seconds: failover ? seconds / 2 : seconds)
        var after: ClusterClockPhase?
        var handover: Double?
        if failover {
            progress("killing the authority, relay-0 (no goodbye)")
            let killed = SystemClock().instant().nanoseconds
            await relays[0].time.abandon()
            relays[0].server.stop()
            await relays[0].nats.close()
            while !(relays[1].time.status.role == .authority && relays[2...].allSatisfy({ $0.time.status.role == .following(relays[1].name) })) {
                guard SystemClock().instant().nanoseconds - killed < 10_000_000_000 else { throw ClusterClockBenchmarkError("no new authority within 10 s") }
                try await Task.sleep(for: .milliseconds(5))
            }
            handover = Double(SystemClock().instant().nanoseconds - killed) / 1e9
            after = try await measure(relays: Array(relays.dropFirst()), participants: Array(participants.dropFirst()),
                                      authority: 1, seconds: seconds / 2)
        }
        let steps = relays.map { $0.time.status.steps }.reduce(0, +)
        for relay in relays.dropFirst(failover ? 1 : 0) {
            await relay.time.stop()
            await relay.nats.close()
        }
        return ClusterClockReport(relays: relays.count, before: before, after: after, handoverSeconds: handover, steps: steps)
    }

    private func startRelay(index: Int, error: (offset: Double, driftPPM: Double), url: String) async throws -> Relay {
        guard let epoch = SessionEpochClock.random().injecting(offset: Int64(error.offset * 1e9), driftPPM: error.driftPPM) else {
            throw ClusterClockBenchmarkError("relay-\(index)'s injected error is out of range")
        }
        let clock = ClusterSessionClock(base: epoch)
        let relayServer = try RelayServer(address: try SocketAddress(host: "127.0.0.1", port: 0), clock: clock)
        let nats = try await NATSConnection.connect(to: url)
        // As `tandem serve --cluster` does: keep the cluster's time first, then serve.
        let time = try await ClusterSessionTime.start(nats: nats, timeService: relayServer.address, clock: clock, id: "relay-\(index)")
        relayServer.start()
        return Relay(name: "relay-\(index)", clock: clock, server: relayServer, nats: nats, time: time)
    }

    /// Reads every clock at one raw instant every 10 ms for `seconds`.
    private func measure(relays: [Relay], participants: [Participant], authority: Int, seconds: Double) async throws -> ClusterClockPhase {
        let system = SystemClock()
        guard let reference = relays.first(where: { $0.name == "relay-\(authority)" }) else { throw ClusterClockBenchmarkError("no authority") }
        var relayErrors: [Double] = []
        var estimateErrors: [Double] = []
        var bounds: [Double] = []
        var ownRelayErrors: [Double] = []
        var crossRelayErrors: [Double] = []
        var largestChange = 0.0
        var previous: (raw: Int64, offsets: [Int64])?
        let end = system.instant().nanoseconds + Int64(seconds * 1e9)
        while system.instant().nanoseconds < end {
            let raw = system.instant().nanoseconds
            let authorityTime = reference.clock.localInstant(atHost: HostInstant(nanoseconds: raw)).nanoseconds
            let times = relays.map { $0.clock.localInstant(atHost: HostInstant(nanoseconds: raw)).nanoseconds }
            for (relay, time) in zip(relays, times) where relay !== reference {
                relayErrors.append(Double(abs(time - authorityTime)) / 1e3)
                if let mapping = relay.clock.mapping {
                    let estimated = mapping.estimate.sessionTime(atLocal: relay.clock.base.localInstant(atHost: HostInstant(nanoseconds: raw)).nanoseconds)
                    estimateErrors.append(Double(abs(estimated - authorityTime)) / 1e3)
                }
                bounds.append(Double(relay.clock.errorBound()) / 1e3)
            }
            for participant in participants {
                guard let estimate = participant.sessionTime(atMonotonic: raw),
                      let own = relays.first(where: { $0.name == "relay-\(participant.relay)" }) else { continue }
                ownRelayErrors.append(Double(abs(estimate - own.clock.localInstant(atHost: HostInstant(nanoseconds: raw)).nanoseconds)) / 1e3)
                crossRelayErrors.append(Double(abs(estimate - authorityTime)) / 1e3)
            }
            // Cluster time minus raw time: changes only by the authority's drift and the slew.
            let offsets = times.map { $0 - raw }
            if let previous {
                let elapsed = Double(raw - previous.raw)
                for (offset, earlier) in zip(offsets, previous.offsets) {
                    // The authority's clock gains 50 ppm on raw time; what is beyond that is slew.
                    largestChange = max(largestChange, abs(Double(offset - earlier) - elapsed * relayErrorsDrift) / 1e3)
                }
            }
            previous = (raw, offsets)
            try await Task.sleep(for: .milliseconds(10))
        }
        return ClusterClockPhase(
            seconds: seconds, relayAgreement: Percentiles(relayErrors), relayEstimate: Percentiles(estimateErrors),
            relayErrorBound: Percentiles(bounds), participantToOwnRelay: Percentiles(ownRelayErrors),
            participantToAuthority: Percentiles(crossRelayErrors), largestOffsetChange: largestChange
        )
    }

    /// The drift of the first relay's clock on raw time, which the cluster's time keeps.
    private var relayErrorsDrift: Double { (relayErrors.first?.driftPPM ?? 0) / 1e6 }
}

/// A benchmark that could not run, and why.
public struct ClusterClockBenchmarkError: Error, CustomStringConvertible {
    /// Why.
    public let description: String
    init(_ description: String) { self.description = description }
}
