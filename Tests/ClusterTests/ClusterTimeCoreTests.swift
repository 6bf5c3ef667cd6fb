import Testing
import TandemClock
@testable import TandemCluster
import TandemNet

/// `ClusterTimeCore` on virtual time: relays with clocks seconds and ±50 ppm apart, announcements
/// delivered as NATS would, and time samples taken from each authority's published mapping with
/// jittered, slightly asymmetric paths. Nothing here sleeps: the test moves time.
@Suite("Cluster time core")
struct ClusterTimeCoreIOTests {
    /// Relays on virtual time, sharing one true clock; `advance` moves it in 5 ms steps.
    struct World {
        struct Relay {
            var core: ClusterTimeCore
            /// Local = true + offset + drift × true.
            let offset: Int64
            let driftPPM: Double
            var alive = true
            var connected = true
            var followed: String?
            var nextProbe: Int64 = 0
            var becameReady: Int64?
            var steps: [Int64] = []
            var authorityChanges: [String?] = []
            func local(_ trueTime: Int64) -> Int64 { trueTime + offset + Int64((Double(trueTime) * driftPPM / 1e6).rounded()) }
            func cluster(_ trueTime: Int64) -> Int64 { core.mapping.clusterTime(atLocal: local(trueTime)) }
        }

        var now: Int64 = 1_000_000_000
        var relays: [String: Relay] = [:]
        var generator = SeededRandom(seed: 7)
        let configuration: ClusterTimeConfiguration
        /// Added to every sample's server stamps of this authority: its time as probed moved.
        var shift: [String: Int64] = [:]
        static let probeInterval: Int64 = 50_000_000

        init(configuration: ClusterTimeConfiguration = ClusterTimeConfiguration()) {
            self.configuration = configuration
        }

        /// Starts relay `id` now; its start instant (age) is the true time.
        mutating func start(_ id: String, offsetSeconds: Double, driftPPM: Double, started: Int64? = nil) {
            let address = try! SocketAddress(host: "127.0.0.1", port: UInt16(7000 + relays.count))
            let offset = Int64(offsetSeconds * 1e9)
            let local = now + offset + Int64((Double(now) * driftPPM / 1e6).rounded())
            let member = ClusterTimeMember(id: id, started: started ?? now, timeService: address)
            relays[id] = Relay(core: ClusterTimeCore(me: member, configuration: configuration, now: local), offset: offset, driftPPM: driftPPM)
            deliver(.started, to: id)
        }

        mutating func deliver(_ event: ClusterTimeCore.Event, to id: String) {
            guard var relay = relays[id], relay.alive else { return }
            let directives = relay.core.handle(event, at: relay.local(now))
            relays[id] = relay
            for directive in directives {
                switch directive {
                case let .announce(announcement):
                    guard relays[id]!.connected else { continue }
                    // Through the wire format, as NATS carries it.
                    let decoded = try! ClusterTimeAnnouncement.decode(announcement.encoded()).get()
                    for other in relays.keys.sorted() where other != id && relays[other]!.connected {
                        deliver(.announcement(decoded), to: other)
                    }
                case let .follow(member):
                    relays[id]!.followed = member.id
                    relays[id]!.nextProbe = now
                case .stopFollowing:
                    relays[id]!.followed = nil
                case .ready:
                    relays[id]!.becameReady = now
                case let .stepped(by: jump):
                    relays[id]!.steps.append(jump)
                case let .authorityChanged(authority):
                    relays[id]!.authorityChanges.append(authority)
                case .publish, .wake:
                    break
                }
            }
        }

        /// One exchange between `id` and the relay it follows, if that one answers.
        mutating func probe(_ id: String) {
            guard let relay = relays[id], let followed = relay.followed, let authority = relays[followed], authority.alive else { return }
            // 20–60 µs each way, independently jittered: asymmetric by up to 40 µs per exchange.
            let there = Int64.random(in: 20_000...60_000, using: &generator)
            let back = Int64.random(in: 20_000...60_000, using: &generator)
            let turnaround: Int64 = 5_000
            let serverShift = shift[followed] ?? 0
            let sample = ClockSample(
                clientSendTime: relay.local(now),
                serverReceiveTime: authority.cluster(now + there) + serverShift,
                serverSendTime: authority.cluster(now + there + turnaround) + serverShift,
                clientReceiveTime: relay.local(now + there + turnaround + back)
            )
            deliver(.sample(sample, from: followed), to: id)
        }

        /// Moves time by `duration` in 5 ms steps: ticks, probes every 50 ms, and `check` after each
        /// step with the cluster times read before and after it.
        mutating func advance(by duration: Int64, check: ((_ before: [String: Int64], _ after: [String: Int64], _ step: Int64) -> Void)? = nil) {
            let step: Int64 = 5_000_000
            let end = now + duration
            while now < end {
                let before = clusterTimes
                now += step
                for id in relays.keys.sorted() {
                    deliver(.tick, to: id)
                    if let relay = relays[id], relay.followed != nil, now >= relay.nextProbe {
                        relays[id]!.nextProbe = now + World.probeInterval
                        probe(id)
                    }
                }
                check?(before, clusterTimes, step)
            }
        }

        /// Every live relay's cluster time now, once it serves time (ready).
        var clusterTimes: [String: Int64] {
            var times: [String: Int64] = [:]
            for (id, relay) in relays where relay.alive && relay.core.me.ready { times[id] = relay.cluster(now) }
            return times
        }

        /// The largest disagreement between live, ready relays now, in ns.
        var spread: Int64 {
            let times = relays.filter { $0.value.alive && $0.value.core.me.ready }.map { $0.value.cluster(now) }
            guard let low = times.min(), let high = times.max() else { return 0 }
            return high - low
        }

        func role(_ id: String) -> ClusterTimeCore.Role { relays[id]!.core.role }
    }

    /// Checks a step of `step` ns of true time moved every relay's cluster time forward at a rate
    /// within the clocks' drift (50 ppm, plus what a fresh estimate may have wrong) and the slew
    /// rate of the true rate: no jump, never backwards.
    static func noJump(slewRate: Double, maximumDriftPPM: Double = 100) -> (([String: Int64], [String: Int64], Int64) -> Void) {
        { before, after, step in
            for (id, end) in after {
                guard let start = before[id] else { continue }
                let moved = end - start
                let allowed = (maximumDriftPPM / 1e6 + slewRate) * Double(step) + 2
                #expect(moved > 0, "relay \(id)'s time went backwards by \(-moved) ns")
                #expect(abs(Double(moved - step)) <= allowed, "relay \(id)'s time moved \(moved - step) ns off the true \(step) ns")
            }
        }
    }

    /// Three relays started together: a, the oldest, with b and c seconds off.
    static func startedTrio(configuration: ClusterTimeConfiguration = ClusterTimeConfiguration()) -> World {
        var world = World(configuration: configuration)
        world.start("a", offsetSeconds: 3.25, driftPPM: 50)
        world.now += 1_000_000
        world.start("b", offsetSeconds: -7.5, driftPPM: -50)
        world.now += 1_000_000
        world.start("c", offsetSeconds: 12.125, driftPPM: 20)
        return world
    }

    @Test("the oldest relay becomes the authority; the others follow it and agree within microseconds")
    func coldStart() {
        var world = ClusterTimeCoreIOTests.startedTrio()
        world.advance(by: 400_000_000)
        #expect(world.role("a") == .discovering, "nothing is chosen before the discovery window ends")
        world.advance(by: 200_000_000)
        #expect(world.role("a") == .authority)
        #expect(world.role("b") == .following("a"))
        #expect(world.role("c") == .following("a"))
        #expect(world.relays["b"]!.becameReady == nil, "not ready before the samples span a second")
        world.advance(by: 1_500_000_000)
        #expect(world.relays["b"]!.becameReady != nil)
        #expect(world.relays["c"]!.becameReady != nil)
        world.advance(by: 5_000_000_000, check: ClusterTimeCoreIOTests.noJump(slewRate: world.configuration.slewRate))
        #expect(world.spread <= 25_000, "spread \(world.spread) ns")
        for id in ["a", "b", "c"] { #expect(world.relays[id]!.steps.isEmpty) }
        // Each relay's estimate knows the drift between the clocks (70 ppm, 30 ppm).
        let drift = world.relays["b"]!.core.mapping.estimate.driftPPM
        #expect(abs(drift - 100) < 5, "b's drift against a: \(drift) ppm")
    }

    @Test("the authority dies: the next oldest takes over with no jump, and the third follows it")
    func authorityDeath() {
        var world = ClusterTimeCoreIOTests.startedTrio()
        world.advance(by: 8_000_000_000)
        #expect(world.spread <= 25_000)
        world.relays["a"]!.alive = false
        // Silent (a SIGKILL): noticed after the liveness timeout.
        world.advance(by: 900_000_000, check: ClusterTimeCoreIOTests.noJump(slewRate: world.configuration.slewRate))
        #expect(world.role("b") == .following("a"), "a is not taken for dead before its timeout")
        world.advance(by: 200_000_000, check: ClusterTimeCoreIOTests.noJump(slewRate: world.configuration.slewRate))
        #expect(world.role("b") == .authority)
        #expect(world.role("c") == .following("b"))
        world.advance(by: 10_000_000_000, check: ClusterTimeCoreIOTests.noJump(slewRate: world.configuration.slewRate))
        #expect(world.spread <= 25_000, "spread \(world.spread) ns after the failover")
        #expect(world.relays["b"]!.steps.isEmpty && world.relays["c"]!.steps.isEmpty)
    }

    @Test("a goodbye hands over at once")
    func goodbye() {
        var world = ClusterTimeCoreIOTests.startedTrio()
        world.advance(by: 3_000_000_000)
        world.deliver(.stopping, to: "a")
        world.relays["a"]!.alive = false
        #expect(world.role("b") == .authority)
        #expect(world.role("c") == .following("b"))
    }

    @Test("a newer relay follows the authority; nobody else changes anything")
    func newerRelay() {
        var world = ClusterTimeCoreIOTests.startedTrio()
        world.advance(by: 4_000_000_000)
        let changes = ["a", "b", "c"].map { world.relays[$0]!.authorityChanges.count }
        world.start("d", offsetSeconds: -40, driftPPM: -45)
        world.advance(by: 3_000_000_000, check: ClusterTimeCoreIOTests.noJump(slewRate: world.configuration.slewRate))
        #expect(world.role("d") == .following("a"))
        #expect(world.relays["d"]!.becameReady != nil)
        #expect(["a", "b", "c"].map { world.relays[$0]!.authorityChanges.count } == changes)
        #expect(world.spread <= 25_000)
    }

    @Test("a relay with a huge injected offset takes the cluster's time before serving: no step counted")
    func hugeOffset() {
        var world = ClusterTimeCoreIOTests.startedTrio()
        world.advance(by: 3_000_000_000)
        world.start("far", offsetSeconds: 86_000, driftPPM: 50)
        world.advance(by: 3_000_000_000)
        let far = world.relays["far"]!
        #expect(far.becameReady != nil)
        #expect(far.steps.isEmpty && far.core.steps == 0)
        #expect(abs(far.cluster(world.now) - world.relays["a"]!.cluster(world.now)) <= 25_000)
    }

    @Test("a new authority found 2 ms off is slewed onto at the configured rate, never stepped")
    func slewLimit() {
        var world = ClusterTimeCoreIOTests.startedTrio()
        world.advance(by: 4_000_000_000)
        // b's time as c will probe it is 2 ms off what c serves (a path whose asymmetry differs by
        // 4 ms, say): c must slew that in once b takes over.
        world.shift["b"] = 2_000_000
        world.relays["a"]!.alive = false
        world.advance(by: 1_100_000_000)
        #expect(world.role("c") == .following("b"))
        var largest = 0.0
        world.advance(by: 3_000_000_000) { before, after, step in
            largest = max(largest, Double(after["c"]! - before["c"]!) - Double(step))
        }
        let rate = world.configuration.slewRate
        // The extra advance per step is the slew plus the clocks' drift (b keeps a's 50 ppm), no more.
        #expect(largest <= (rate + 100e-6) * 5_000_000 + 2)
        #expect(largest >= rate * 5_000_000, "the correction is being slewed: \(largest) ns per 5 ms")
        // 2 ms at 100 ppm: 20 s.
        world.advance(by: 20_000_000_000, check: ClusterTimeCoreIOTests.noJump(slewRate: rate))
        let moved = world.relays["c"]!.cluster(world.now) - world.relays["b"]!.cluster(world.now)
        #expect(abs(moved - 2_000_000) <= 25_000, "c converged on b's time as it sees it: \(moved) ns")
        #expect(world.relays["c"]!.steps.isEmpty)
    }

    @Test("two clusters that never agreed merge: the younger side steps once")
    func mergeSteps() {
        var world = World()
        world.start("a", offsetSeconds: 100, driftPPM: 10)
        world.relays["a"]!.connected = false
        world.now += 1_000_000
        world.start("b", offsetSeconds: -100, driftPPM: -10)
        world.advance(by: 2_000_000_000)
        #expect(world.role("a") == .authority && world.role("b") == .authority, "apart, each is its own authority")
        world.relays["a"]!.connected = true
        world.deliver(.connectionRestored, to: "a")
        world.advance(by: 2_000_000_000)
        #expect(world.role("a") == .authority)
        #expect(world.role("b") == .following("a"))
        #expect(world.relays["b"]!.steps.count == 1)
        #expect(world.relays["a"]!.steps.isEmpty)
        #expect(world.spread <= 25_000)
    }

    @Test("NATS lost: a follower keeps its authority and goes on following it over UDP")
    func natsLost() {
        var world = ClusterTimeCoreIOTests.startedTrio()
        world.advance(by: 3_000_000_000)
        world.relays["c"]!.connected = false
        world.deliver(.connectionLost, to: "c")
        world.advance(by: 5_000_000_000, check: ClusterTimeCoreIOTests.noJump(slewRate: world.configuration.slewRate))
        #expect(world.role("c") == .following("a"), "nobody expires while NATS is away")
        #expect(world.relays["c"]!.core.peers.count == 2)
        // The others no longer hear c, and do not care: it is not their authority.
        #expect(world.relays["a"]!.core.peers["c"] == nil)
        #expect(world.spread <= 25_000)
        world.relays["c"]!.connected = true
        world.deliver(.connectionRestored, to: "c")
        world.advance(by: 500_000_000)
        #expect(world.relays["a"]!.core.peers["c"] != nil, "c's hello is heard again")
    }

    @Test("a relay that hears nobody becomes the authority of its own cluster after the window")
    func alone() {
        var world = World()
        world.start("solo", offsetSeconds: 1, driftPPM: 0)
        world.advance(by: 495_000_000)
        #expect(world.role("solo") == .discovering)
        world.advance(by: 10_000_000)
        #expect(world.role("solo") == .authority)
        #expect(world.relays["solo"]!.becameReady != nil)
        #expect(world.relays["solo"]!.cluster(world.now) == world.relays["solo"]!.local(world.now), "its own clock is the cluster's")
    }

    @Test("bad announcements are refused with a reason", arguments: [
        Array(repeating: UInt8(ascii: "x"), count: 2_000),
        Array("not json".utf8),
        Array(#"{"v":2,"kind":"hello","member":{"id":"a","started":1,"time":"127.0.0.1:1","ready":true}}"#.utf8),
        Array(#"{"v":1,"kind":"hello","member":{"id":"a b","started":1,"time":"127.0.0.1:1","ready":true}}"#.utf8),
        Array(#"{"v":1,"kind":"hello","member":{"id":"a","started":1,"time":"127.0.0.1:0","ready":true}}"#.utf8),
        Array(#"{"v":1,"kind":"hello","member":{"id":"a","started":1,"time":"somewhere","ready":true}}"#.utf8),
        Array(#"{"v":1,"kind":"shout","member":{"id":"a","started":1,"time":"127.0.0.1:1","ready":true}}"#.utf8),
    ])
    func badAnnouncements(payload: [UInt8]) {
        guard case let .failure(error) = ClusterTimeAnnouncement.decode(payload) else {
            Issue.record("accepted \(String(decoding: payload.prefix(80), as: UTF8.self))")
            return
        }
        #expect(error.kind == .malformedAnnouncement)
        #expect(!error.reason.isEmpty)
    }

    @Test("an announcement survives its wire form")
    func roundTrip() throws {
        let member = ClusterTimeMember(id: "relay-1", started: 1_700_000_000_000_000_000, timeService: try SocketAddress(parsing: "[::1]:7070"), ready: true)
        let announcement = ClusterTimeAnnouncement(kind: .heartbeat, member: member, authority: "relay-0")
        #expect(try ClusterTimeAnnouncement.decode(announcement.encoded()).get() == announcement)
    }

    @Test("the mapping slews at its rate, and a session clock over it inverts exactly")
    func mappingSlews() {
        let start: Int64 = 5_000_000_000
        let identity = ClusterClockMapping.identity(at: start, slewRate: 1e-4)
        let target = ClockEstimate(referenceTime: start, offset: 1_000_000, drift: 0, errorBound: 100, driftUncertainty: 0)
        let slewing = identity.retargeted(to: target, at: start)
        #expect(slewing.clusterTime(atLocal: start) == start, "no jump at the retarget")
        #expect(slewing.clusterTime(atLocal: start + 1_000_000_000) == start + 1_000_000_000 + 100_000)
        #expect(slewing.clusterTime(atLocal: start + 20_000_000_000) == start + 20_000_000_000 + 1_000_000)
        #expect(slewing.errorBound(atLocal: start) == 1_000_100)
        #expect(identity.stepped(to: target, at: start).clusterTime(atLocal: start) == start + 1_000_000)
        let clock = ClusterSessionClock(base: SystemClock())
        clock.publish(slewing)
        for raw in [start, start + 3_000_000_000, start + 30_000_000_000] {
            #expect(clock.localTime(atMonotonic: clock.monotonicTime(atLocal: raw)) == raw)
        }
    }
}
