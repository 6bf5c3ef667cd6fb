import Foundation
import TandemClock
import TandemNet
import TandemTestKit
import TandemWire
import Testing

/// A whole session through the in-memory relay on an embedded loop: join, ordered broadcast,
/// reliable and unreliable delivery, impaired delivery and departure, all in virtual time, with
/// no sleep and nothing real to wait for.
@Suite struct VirtualRelayWorldTests {
    static let ms: Int64 = 1_000_000

    @Test func participantsJoinAndEveryoneHearsOfEachNewOne() throws {
        let world = VirtualRelayWorld()
        defer { world.shutdown() }
        let start = world.now
        let ana = try world.join("ana")
        let benOrigin = world.now
        let ben = try world.join("ben", clockOffset: 3_700 * Self.ms, driftPPM: 80)
        let cem = try world.join("cem")
        #expect(ana.welcome.created)
        #expect(!ben.welcome.created)
        #expect(cem.welcome.participants.map(\.displayName) == ["ana", "ben", "cem"])
        world.advance(by: 100 * Self.ms)
        let joinedSeenByAna = ana.events.compactMap { if case let .participantJoined(record) = $0 { record.id } else { nil } }
        #expect(joinedSeenByAna == [ben.id, cem.id])
        // Joining took virtual time only: a few loop passes, not a second of it.
        #expect(world.now - start < 1_000 * Self.ms)
        // Each participant's clock is the session clock off by its own offset and drift.
        world.advance(by: 10_000 * Self.ms)
        let drift = Int64((Double(world.now - benOrigin) * 80e-6).rounded())
        #expect(drift > 800_000, "80 ppm of a little more than 10 s")
        #expect(abs(ben.clock.instant().nanoseconds - world.now - 3_700 * Self.ms - drift) <= 1_000)
        #expect(ana.clock.instant().nanoseconds == world.now)
    }

    @Test func orderedBroadcastsReachEveryoneInOneOrderAndLateJoinersGetTheHistory() throws {
        let world = VirtualRelayWorld()
        defer { world.shutdown() }
        let ana = try world.join("ana")
        let ben = try world.join("ben")
        for index in 0..<5 {
            try (index.isMultiple(of: 2) ? ana : ben).link.sendOrdered([UInt8(index)])
            world.advance(by: 3 * Self.ms)
        }
        world.advance(by: 100 * Self.ms)
        for participant in [ana, ben] {
            #expect(participant.ordered.map(\.order) == [1, 2, 3, 4, 5])
            #expect(participant.ordered.map(\.body) == [[0], [1], [2], [3], [4]])
        }
        #expect(ana.ordered.map(\.sender) == ben.ordered.map(\.sender))
        // Ordered in session time: each stamp is the virtual instant the relay ordered it at.
        let stamps = ana.ordered.map(\.orderedInstant.nanoseconds)
        #expect(stamps == stamps.sorted())
        #expect(ana.ordered.allSatisfy { $0.effectiveInstant.nanoseconds > $0.orderedInstant.nanoseconds })
        let late = try world.join("late")
        #expect(late.welcome.orderedHistory.map(\.order) == [1, 2, 3, 4, 5])
        try late.link.sendOrdered([9])
        world.advance(by: 100 * Self.ms)
        #expect(late.ordered.map(\.order) == [6])
        #expect(ana.ordered.last?.body == [9])
    }

    @Test func reliableAndUnreliableMessagesArriveAsAddressed() throws {
        let world = VirtualRelayWorld()
        defer { world.shutdown() }
        let ana = try world.join("ana")
        let ben = try world.join("ben")
        let cem = try world.join("cem")
        try ana.link.send([1], to: .everyone, reliable: true)
        try ana.link.send([2], to: .only([cem.id]), reliable: true)
        try ana.link.send([3], to: .everyone, reliable: false)
        world.advance(by: 50 * Self.ms)
        #expect(ben.messages.map(\.body) == [[1], [3]])
        #expect(cem.messages.map(\.body) == [[1], [2], [3]])
        #expect(cem.messages.map(\.reliable) == [true, true, false])
        #expect(cem.messages.allSatisfy { $0.from == ana.id })
        #expect(ana.messages.isEmpty, "a sender does not hear its own messages")
    }

    @Test func impairedDatagramsAreLostAndDelayedAsSeededAndRepeat() throws {
        func run(seed: UInt64) throws -> (bodies: [[UInt8]], delays: [Int64]) {
            let world = VirtualRelayWorld(impairment: Impairment(delay: 20 * Self.ms, jitter: 2 * Self.ms, loss: 0.3), seed: seed)
            defer { world.shutdown() }
            let ana = try world.join("ana")
            let ben = try world.join("ben")
            var sentAt: [UInt8: Int64] = [:]
            for index in 0..<200 {
                sentAt[UInt8(index)] = world.now
                try ana.link.send([UInt8(index)], to: .everyone, reliable: false)
                world.advance(by: Self.ms)
            }
            world.advance(by: 100 * Self.ms)
            let arrivals = ben.timedEvents.compactMap { entry -> (UInt8, Int64)? in
                guard case let .message(_, body, false) = entry.event else { return nil }
                return (body[0], entry.time)
            }
            return (arrivals.map { [$0.0] }, arrivals.map { $0.1 - sentAt[$0.0]! })
        }
        let first = try run(seed: 5)
        let again = try run(seed: 5)
        let other = try run(seed: 6)
        #expect(first.bodies == again.bodies, "the same seed loses the same datagrams")
        #expect(first.bodies != other.bodies)
        // Lost with 30 % each way: about half arrive.
        #expect((75...125).contains(first.bodies.count), "\(first.bodies.count) of 200 arrived")
        // Up then down, each 20 ± 2 ms: 36 to 44 ms, spread over that range, so some overtake others.
        #expect(first.delays.allSatisfy { (36 * Self.ms...44 * Self.ms + 2).contains($0) }, "\(first.delays)")
        #expect(Set(first.delays).count > 10)
        #expect(first.bodies != first.bodies.sorted { $0[0] < $1[0] }, "jitter wider than the spacing reorders")
    }

    @Test func aDepartureIsAnnouncedAndTheOthersGoOn() throws {
        let world = VirtualRelayWorld()
        defer { world.shutdown() }
        let ana = try world.join("ana")
        let ben = try world.join("ben")
        let cem = try world.join("cem")
        #expect(world.leave(ben))
        world.advance(by: 50 * Self.ms)
        for participant in [ana, cem] {
            #expect(participant.events.contains { if case .participantLeft(ben.id) = $0 { true } else { false } })
        }
        #expect(throws: RelayError.self) { try ben.link.sendOrdered([1]) }
        try cem.link.sendOrdered([2])
        world.advance(by: 50 * Self.ms)
        #expect(ana.ordered.map(\.body) == [[2]])
        #expect(!ben.ordered.contains { $0.body == [2] })
    }

    @Test func aWrongSessionKeyIsRefusedInVirtualTime() throws {
        let world = VirtualRelayWorld()
        defer { world.shutdown() }
        _ = try world.join("ana")
        let stranger = world.relay.makeLink(RelayJoinRequest(sessionID: world.sessionID, displayName: "eve",
                                                             sessionKey: SigningKeyPair(seed: [UInt8](repeating: 1, count: 32)),
                                                             createIfAbsent: false, activity: []))
        let refused = ResultBox()
        stranger.beginJoin { refused.set($0) }
        #expect(world.advance(until: { refused.isSet }, within: 10_000 * Self.ms))
        #expect(refused.failed)
    }

    @Test func theSameScriptGivesTheSameSessionToTheNanosecond() throws {
        func script() throws -> [String] {
            let world = VirtualRelayWorld(seed: 42)
            defer { world.shutdown() }
            let ana = try world.join("ana")
            let ben = try world.join("ben", clockOffset: -250 * Self.ms, driftPPM: -120)
            for index in 0..<20 {
                try (index.isMultiple(of: 3) ? ben : ana).link.sendOrdered([UInt8(index)])
                try ana.link.send([UInt8(index)], to: .everyone, reliable: index.isMultiple(of: 2))
                world.advance(by: 7 * Self.ms)
            }
            world.leave(ana)
            world.advance(by: 200 * Self.ms)
            return ben.timedEvents.map { "\($0.time) \($0.event)" }
        }
        let first = try script()
        #expect(first.count > 40)
        #expect(first == (try script()))
    }
}

/// A join's outcome, set on the loop.
final class ResultBox: @unchecked Sendable {
    private var result: Result<RelayWelcome, RelayError>?
    func set(_ result: Result<RelayWelcome, RelayError>) { self.result = result }
    var isSet: Bool { result != nil }
    var failed: Bool { if case .failure? = result { true } else { false } }
}

/// Frames through an impaired in-memory relay: delayed both ways, never lost, never reordered.
@Suite struct ImpairedInMemoryRelayTests {
    static let ms: Int64 = 1_000_000

    @Test func framesAreDelayedEachWayAndStayInOrderWithoutLoss() throws {
        let impairment = Impairment(delay: 15 * Self.ms, jitter: 5 * Self.ms, loss: 0.5, asymmetry: 10 * Self.ms, reorder: 0.5)
        let world = VirtualRelayWorld(impairment: impairment, seed: 9)
        defer { world.shutdown() }
        let ana = try world.join("ana")
        let ben = try world.join("ben")
        var sentAt: [Int64] = []
        for index in 0..<100 {
            sentAt.append(world.now)
            try ana.link.send([UInt8(index)], to: .everyone, reliable: true)
            world.advance(by: Self.ms)
        }
        world.advance(by: 500 * Self.ms)
        let arrivals = ben.timedEvents.compactMap { entry -> (Int, Int64)? in
            guard case let .message(_, body, true) = entry.event else { return nil }
            return (Int(body[0]), entry.time)
        }
        #expect(arrivals.map(\.0) == Array(0..<100), "reliable frames are neither lost nor reordered")
        let delays = arrivals.map { $0.1 - sentAt[$0.0] }
        // Up 10–20 ms, down 20–30 ms (the asymmetry): at least 30 ms in all.
        #expect(delays.allSatisfy { $0 >= 30 * Self.ms }, "\(delays.min() ?? 0)")
        #expect(delays.contains { $0 > 35 * Self.ms })
    }

    @Test func duplicatedDatagramsArriveTwice() throws {
        let world = VirtualRelayWorld(impairment: Impairment(delay: 5 * Self.ms, jitter: 1 * Self.ms, duplication: 0.5), seed: 3)
        defer { world.shutdown() }
        let ana = try world.join("ana")
        let ben = try world.join("ben")
        for index in 0..<100 {
            try ana.link.send([UInt8(index)], to: .everyone, reliable: false)
            world.advance(by: Self.ms)
        }
        world.advance(by: 100 * Self.ms)
        let bodies = ben.messages.map { $0.body[0] }
        #expect(Set(bodies).count == 100, "nothing lost")
        // Duplicated on the way up and again on the way down: a quarter arrive four times.
        #expect(bodies.count > 150, "\(bodies.count) arrivals of 100 datagrams")
    }
}

/// A participant's view of the world's loop: its local time as `now`, its deadlines in it.
@Suite struct SkewedEventLoopTests {
    static let ms: Int64 = 1_000_000

    /// What a shell under test does with any serial loop: wakes at a deadline of its own clock.
    final class Waker: @unchecked Sendable {
        let loop: any SerialEventLoop
        var woke: [(local: Int64, session: Int64)] = []
        let session: any LocalClock

        init(loop: any SerialEventLoop, session: any LocalClock) {
            self.loop = loop
            self.session = session
        }

        func wake(at local: Int64) {
            loop.schedule(at: LocalInstant(nanoseconds: local)) { [self] in
                loop.preconditionInLoop()
                woke.append((loop.now.nanoseconds, session.instant().nanoseconds))
            }
        }
    }

    struct Skew: Sendable {
        var offset: Int64
        var drift: Double
    }

    static let skews = [Skew(offset: 0, drift: 0), Skew(offset: 3_700 * ms, drift: 80), Skew(offset: -2_250 * ms, drift: -120),
                        Skew(offset: 41_000 * ms, drift: 150)]

    @Test(arguments: skews)
    func deadlinesInLocalTimeRunWhenTheLocalClockReadsThemNeverEarlier(skew: Skew) throws {
        let offset = skew.offset
        let drift = skew.drift
        let world = VirtualRelayWorld()
        defer { world.shutdown() }
        let peer = try world.join("peer", clockOffset: offset, driftPPM: drift)
        let waker = Waker(loop: peer.loop, session: world.loop.clock)
        let start = peer.loop.now.nanoseconds
        #expect(start == peer.clock.instant().nanoseconds)
        let deadlines = [start + 1, start + 333 * Self.ms + 7, start + 10_000 * Self.ms]
        for deadline in deadlines.reversed() { waker.wake(at: deadline) }
        world.advance(by: 11_000 * Self.ms)
        #expect(waker.woke.map(\.local) == deadlines, "each runs at its local deadline exactly")
        for wake in waker.woke {
            // One nanosecond of session time earlier, the local clock had not yet reached it.
            #expect(peer.clock.localTime(atBase: wake.session - 1) < wake.local)
        }
    }

    @Test func tickersHearTheLocalTime() throws {
        let world = VirtualRelayWorld()
        defer { world.shutdown() }
        let peer = try world.join("peer", clockOffset: 5_000 * Self.ms, driftPPM: 200)
        let heard = ResultLog()
        peer.loop.execute { peer.loop.addTicker { heard.append($0.nanoseconds) } }
        world.advance(by: 100 * Self.ms)
        #expect(heard.values.count == 5)
        #expect(heard.values.allSatisfy { $0 > world.now })
        #expect(heard.values == heard.values.sorted())
    }
}

/// Values appended on the loop.
final class ResultLog: @unchecked Sendable {
    private(set) var values: [Int64] = []
    func append(_ value: Int64) { values.append(value) }
}

/// Interruptions and storms through the world: what takes seconds of real time, in virtual time.
@Suite struct VirtualRelayWorldStressTests {
    static let ms: Int64 = 1_000_000

    @Test func anInterruptedLinkResumesWithoutLossWithinTheGracePeriod() throws {
        let world = VirtualRelayWorld()
        defer { world.shutdown() }
        let ana = try world.join("ana")
        let ben = try world.join("ben")
        ben.link.interruptConnection(for: .milliseconds(300))
        world.advance(by: 10 * Self.ms)
        for index in 0..<10 {
            try ana.link.sendOrdered([UInt8(index)])
            try ana.link.send([UInt8(index)], to: .everyone, reliable: true)
            world.advance(by: 20 * Self.ms)
        }
        #expect(world.advance(until: { ben.ordered.count == 10 }, within: 5_000 * Self.ms))
        #expect(ben.ordered.map(\.body) == (0..<10).map { [UInt8($0)] })
        #expect(ben.messages.map(\.body) == (0..<10).map { [UInt8($0)] })
        let events = ben.events
        let interrupted = events.firstIndex { if case .connectionInterrupted = $0 { true } else { false } }
        let resumed = events.firstIndex { if case .connectionResumed = $0 { true } else { false } }
        #expect(interrupted != nil && resumed != nil && interrupted! < resumed!)
        #expect(!ana.events.contains { if case .participantLeft = $0 { true } else { false } })
    }

    @Test func aLinkGoneLongerThanTheGracePeriodIsAnnouncedAsLeft() throws {
        var configuration = RelayCoreConfiguration()
        configuration.gracePeriod = 2_000 * Self.ms
        let world = VirtualRelayWorld(configuration: configuration)
        defer { world.shutdown() }
        let ana = try world.join("ana")
        let ben = try world.join("ben")
        ben.link.interruptConnection(for: .seconds(60))
        let left = world.advance(until: {
            ana.events.contains { if case .participantLeft(ben.id) = $0 { true } else { false } }
        }, within: 10_000 * Self.ms)
        #expect(left)
        // Announced once the grace period has run out, not before.
        let announcedAt = try #require(ana.timedEvents.first { if case .participantLeft = $0.event { true } else { false } }?.time)
        let interruptedAt = try #require(ben.timedEvents.first { if case .connectionInterrupted = $0.event { true } else { false } }?.time)
        #expect(announcedAt - interruptedAt >= 2_000 * Self.ms)
    }

    @Test func aStormOfOrderedProposalsFromEightPeersOnImpairedPathsReachesAllInOneOrder() throws {
        let world = VirtualRelayWorld(impairment: Impairment(delay: 25 * Self.ms, jitter: 20 * Self.ms, loss: 0.02), seed: 13)
        defer { world.shutdown() }
        let peers = try (0..<8).map { try world.join("peer \($0)", clockOffset: Int64($0) * 1_000 * Self.ms, driftPPM: Double($0 * 20)) }
        for round in 0..<50 {
            for (index, peer) in peers.enumerated() { try peer.link.sendOrdered([UInt8(round), UInt8(index)]) }
            world.advance(by: Self.ms)
        }
        #expect(world.advance(until: { peers.allSatisfy { $0.ordered.count == 400 } }, within: 30_000 * Self.ms))
        let reference = peers[0].ordered
        #expect(reference.map(\.order) == Array(1...400))
        for peer in peers.dropFirst() {
            #expect(peer.ordered.map(\.order) == reference.map(\.order))
            #expect(peer.ordered.map(\.body) == reference.map(\.body))
            #expect(peer.ordered.map(\.sender) == reference.map(\.sender))
        }
        // Each sender's proposals keep its own order within the total one.
        for (index, peer) in peers.enumerated() {
            let own = reference.filter { $0.sender == peer.id }.map { Int($0.body[0]) }
            #expect(own == Array(0..<50), "peer \(index)")
        }
    }
}
