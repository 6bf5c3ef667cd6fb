import Foundation
@testable import TandemNet
import TandemWire
import Testing

/// The pings between links and the relay on virtual time: a connection that is busy anyway gets
/// none within the interval, yet its round trip is still measured at a bounded interval; a
/// silent one is pinged and timed out as it always was.
@Suite("Relay control frame schedule")
struct ControlFrameScheduleTests {
    static let ms: Int64 = 1_000_000
    private let key = [UInt8](repeating: 3, count: 32)
    private let session = UUID()

    private func pings(_ directives: [RelayDirective], to connection: RelayConnectionID) -> [UInt64] {
        CoreAdmission.frames(directives, to: connection).compactMap { if case let .ping(value) = $0 { value } else { nil } }
    }

    @Test("the relay's ping rule", arguments: [
        // (since the last ping, since last heard, busy interval, due)
        (999, 5_000, 5_000, false),
        (1_000, 1_000, 5_000, true),
        (1_000, 999, 5_000, false),
        (4_999, 10, 5_000, false),
        (5_000, 10, 5_000, true),
        (1_000, 10, 1_000, true),
        (1_000, 10, 0, true),
    ] as [(Int64, Int64, Int64, Bool)])
    func probeRule(sinceProbe: Int64, sinceHeard: Int64, busy: Int64, due: Bool) {
        var configuration = RelayCoreConfiguration()
        configuration.busyRoundTripProbeInterval = busy * Self.ms
        let now: Int64 = 100_000 * Self.ms
        #expect(configuration.isProbeDue(lastProbe: now - sinceProbe * Self.ms, lastHeard: now - sinceHeard * Self.ms, at: now) == due)
    }

    @Test("a connection heard from every 100 ms is pinged only every busyRoundTripProbeInterval, and measured then")
    func busyConnectionIsMeasuredAtTheBusyInterval() throws {
        let ms = Self.ms
        var core = RelayCore()
        #expect(core.configuration.busyRoundTripProbeInterval == 5_000 * ms)
        let one = RelayConnectionID(1)
        let alice = TestIdentities.make()
        let admitted = CoreAdmission(key: key, session: session).admit(&core, one, alice, create: true, at: 0)
        let first = try #require(pings(admitted, to: one).last, "pinged on admission")
        _ = core.onFrame(.pong(first), from: one, at: 2 * ms)
        #expect(core.roundTrip(of: alice, in: session) == 2 * ms)

        var pinged: [Int64] = []
        var now: Int64 = 0
        while now < 10_050 * ms {
            now += 50 * ms
            // The link's own traffic: a frame every 100 ms (here its pings, answered by pongs).
            if now % (100 * ms) == 0 {
                let answer = core.onFrame(.ping(UInt64(now)), from: one, at: now)
                #expect(CoreAdmission.frames(answer, to: one) == [.pong(UInt64(now))])
            }
            for value in pings(core.onTick(at: now), to: one) {
                pinged.append(now)
                // Answered after 7 ms: the round trip follows.
                _ = core.onFrame(.pong(value), from: one, at: now + 7 * ms)
            }
        }
        #expect(pinged == [5_000 * ms, 10_000 * ms], "none within the interval; one each busy interval")
        #expect(core.roundTrip(of: alice, in: session) == 7 * ms)
    }

    @Test("a silent connection is pinged every interval and dropped after the idle timeout")
    func silentConnectionIsPingedAndTimedOut() throws {
        let ms = Self.ms
        var core = RelayCore()
        let one = RelayConnectionID(1)
        let alice = TestIdentities.make()
        _ = CoreAdmission(key: key, session: session).admit(&core, one, alice, create: true, at: 0)
        var pinged: [Int64] = []
        var closedAt: Int64?
        var now: Int64 = 0
        while closedAt == nil, now < 20_000 * ms {
            now += 100 * ms
            let directives = core.onTick(at: now)
            if !pings(directives, to: one).isEmpty { pinged.append(now) }
            if directives.contains(where: { if case .close(one) = $0 { true } else { false } }) { closedAt = now }
        }
        #expect(pinged == (1...15).map { Int64($0) * 1_000 * ms })
        #expect(closedAt == 15_100 * ms, "silent for longer than idleTimeout (15 s)")
        #expect(core.roundTrip(of: alice, in: session) == nil)
    }

    // MARK: Links and the relay together

    @Test("a busy pair: no link pings, relay pings only every busy interval, both round trips measured, nobody quiet")
    func busyPairSendsFewControlFrames() throws {
        var world = LinkWorld()
        let ana = world.add("ana", create: true)
        let ben = world.add("ben", create: false)
        world.join(ana)
        world.join(ben)
        world.counts = [:]
        let start = world.now
        // Ana sends ben ten messages a second for ten seconds.
        while world.now < start + 10_000 * Self.ms {
            if (world.now - start) % (100 * Self.ms) == 0 { world.send(from: ana, [UInt8](repeating: 1, count: 8)) }
            _ = world.advance(by: 10 * Self.ms)
        }
        #expect(world.messages[ben] == 100)
        #expect(world.counts[.linkPing(ana)] ?? 0 == 0, "ana hears the relay's acknowledgements")
        #expect(world.counts[.linkPing(ben)] ?? 0 == 0, "ben hears the deliveries")
        #expect((world.counts[.relayPing(ana)] ?? 0) == 2, "at 5 s and 10 s after ana's admission")
        #expect((world.counts[.relayPing(ben)] ?? 0) == 2)
        #expect(world.quiet.isEmpty)
        #expect(world.closed.isEmpty)
        let relay = world.relay
        #expect(relay.roundTrip(of: world.links[ana].id, in: world.sessionID) != nil)
        #expect(relay.roundTrip(of: world.links[ben].id, in: world.sessionID) != nil)
        // Ana's acknowledgements follow acknowledgementInterval (a second), so her unacknowledged
        // messages stay within a second's worth.
        #expect(world.maximumUnacknowledged[ana] ?? .max <= 11)
    }

    @Test("a quiet connection: fewer pings than one from each end a second, nobody is quiet; a relay gone silent is noticed as before")
    func quietPairKeepsLivenessAndSilenceIsNoticed() throws {
        var world = LinkWorld()
        let ana = world.add("ana", create: true)
        world.join(ana)
        world.counts = [:]
        _ = world.advance(by: 10_000 * Self.ms)
        // Whichever end falls due first pings, and the other, hearing it, mostly does not:
        // fewer pings than one from each end every second.
        let pings = (world.counts[.linkPing(ana)] ?? 0) + (world.counts[.relayPing(ana)] ?? 0)
        #expect((9...14).contains(pings), "\(world.counts)")
        #expect(world.quiet.isEmpty)
        #expect(world.closed.isEmpty)

        // The relay goes silent: the link says so after quietLimit and drops the connection after
        // silenceLimit, as it would with a ping every second.
        world.relaySilent = true
        let silentFrom = world.now
        var quietAt: Int64?
        var droppedAt: Int64?
        while droppedAt == nil, world.now < silentFrom + 8_000 * Self.ms {
            let step = world.advance(by: 10 * Self.ms)
            if step.quiet.contains(ana), quietAt == nil { quietAt = world.now }
            if step.disconnected.contains(ana) { droppedAt = world.now }
        }
        let quiet = try #require(quietAt) - silentFrom
        let dropped = try #require(droppedAt) - silentFrom
        #expect(quiet > 1_500 * Self.ms - 1_000 * Self.ms && quiet <= 1_520 * Self.ms, "\(quiet / Self.ms) ms")
        #expect(dropped > 4_000 * Self.ms && dropped <= 5_020 * Self.ms, "\(dropped / Self.ms) ms")
    }
}
