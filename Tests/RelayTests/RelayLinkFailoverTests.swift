import Foundation
@testable import TandemNet
import TandemWire
import Testing

/// Links' pure cores against relays' pure cores on virtual time: which relay of a list a link
/// starts at, and where it goes when a relay is dead, lost mid-session, or lacks the session.
///
/// Each relay of a link's list is a door into a `RelayCore`: doors into one core stand for the
/// relays of a cluster (any of them serves the session), doors into separate cores for
/// independent single relays (only the one that created the session holds it).
@Suite("Relay link failover")
struct RelayLinkFailoverTests {
    static let ms: Int64 = 1_000_000
    static let names = ["10.0.0.1:7462", "10.0.0.2:7462", "[fd00::3]:7462"]

    @Test func aJoinerStartsAtTheRelayItsDrawPicksAndACreatorAtTheFirst() {
        for draw: UInt64 in [0, 1, 2, 4, 0xFFFF_FFFF_FFFF_FFFF] {
            var world = FailoverWorld(doors: [0, 0, 0])
            let ana = world.add("ana", create: true, randomness: draw)
            let ben = world.add("ben", create: false, randomness: draw)
            world.start(ana)
            world.start(ben)
            #expect(world.participants[ana].connects == [0], "a creator starts where the session is created")
            #expect(world.participants[ben].connects == [Int(draw % 3)])
            #expect(world.participants[ben].welcome?.participants.count == 2)
        }
    }

    @Test func aDeadFirstRelayIsPassedOverAtOnceBeforeTheFirstJoin() throws {
        var world = FailoverWorld(doors: [0, 0])
        world.up = [1]
        let ana = world.add("ana", create: true)
        world.start(ana)
        #expect(world.participants[ana].connects == [0, 1])
        let welcome = try #require(world.participants[ana].welcome)
        #expect(welcome.created)
        #expect(world.now == 0, "no pause between relays while joining")
        #expect(world.participants[ana].tokens.count == 1)
    }

    @Test func aRelayThatAcceptsButNeverAnswersIsLeftAfterTheAttemptTimeout() throws {
        var world = FailoverWorld(doors: [0, 0])
        world.silent = [0]
        let ana = world.add("ana", create: true)
        world.start(ana)
        #expect(world.participants[ana].welcome == nil)
        world.advance(by: 2_900 * Self.ms)
        #expect(world.participants[ana].connects == [0], "still waiting for the first relay")
        world.advance(by: 200 * Self.ms)
        #expect(world.participants[ana].connects == [0, 1])
        #expect(world.participants[ana].attempts.last?.time == 3_010 * Self.ms, "one attempt timeout (3 s), on the next tick")
        #expect(world.participants[ana].welcome?.created == true, "well within the whole join's 10 s")
    }

    @Test func aRelayWithoutTheSessionIsPassedOver() throws {
        // Two independent relays; the session lives on the second only (its creator found the
        // first down, and created it on the second).
        var world = FailoverWorld(doors: [0, 1])
        let ben = world.add("ben", create: true)
        world.start(ben, onlyOn: 1)
        #expect(world.participants[ben].connects == [0, 1])
        #expect(world.participants[ben].welcome?.created == true)
        let cem = world.add("cem", create: false, randomness: 0)
        world.start(cem)
        #expect(world.participants[cem].connects == [0, 1])
        let welcome = try #require(world.participants[cem].welcome)
        #expect(welcome.participants.count == 2, "cem joined ben's session on the second relay")
    }

    @Test func whenNoRelayHasTheSessionTheErrorNamesEachRelayAndWhatItSaid() throws {
        var world = FailoverWorld(doors: [0, 1, 2])
        world.up = [0, 2]
        let ben = world.add("ben", create: false, randomness: 2)
        world.start(ben)
        #expect(world.participants[ben].connects == [2, 0, 1])
        let error = try #require(world.participants[ben].joinError)
        #expect(error.code == .unreachable, "the session may be on the relay that did not answer")
        for name in Self.names { #expect(error.detail.contains(name), "\(error)") }
        #expect(error.detail.contains("\(Self.names[0]): session not found"))
        #expect(error.detail.contains("\(Self.names[1]): connection refused"))

        var none = FailoverWorld(doors: [0, 1])
        let eve = none.add("eve", create: false, randomness: 1)
        none.start(eve)
        let notFound = try #require(none.participants[eve].joinError)
        #expect(notFound.code == .sessionNotFound)
        #expect(notFound.detail.contains("\(Self.names[0]): session not found; \(Self.names[1]): session not found"), "\(notFound)")
    }

    @Test func aSingleRelayFailsAsItAlwaysDid() throws {
        var world = FailoverWorld(doors: [0], names: ["127.0.0.1:9"])
        world.up = []
        let ana = world.add("ana", create: true)
        world.start(ana)
        let error = try #require(world.participants[ana].joinError)
        #expect(error == RelayError(.unreachable, "connection refused"))
        var empty = FailoverWorld(doors: [0], names: ["127.0.0.1:9"])
        let ben = empty.add("ben", create: false)
        empty.start(ben)
        #expect(empty.participants[ben].joinError?.code == .sessionNotFound)
    }

    @Test func aRelayThatStopsAnsweringIsToldWithinTheQuietLimitAndHeardAgainWithoutReconnecting() throws {
        var world = FailoverWorld(doors: [0])
        let ana = world.add("ana", create: true)
        world.start(ana)
        world.advance(by: 500 * Self.ms)
        func quiets() -> Int { world.participants[ana].events.count { if case .connectionQuiet = $0 { true } else { false } } }
        // The relay stops (as a SIGSTOP would): told once, 1.5 s after it was last heard (its
        // last pong, at most a ping interval before it stopped), so within 1.5 s of the stop.
        world.silent = [0]
        world.advance(by: 400 * Self.ms)
        #expect(quiets() == 0)
        world.advance(by: 1_100 * Self.ms)
        #expect(quiets() == 1)
        world.advance(by: 1_000 * Self.ms)
        #expect(quiets() == 1)
        #expect(world.participants[ana].interruptions == 0, "the connection is kept until the silence limit")
        // It answers again: heard, without a reconnection.
        world.silent = []
        world.advance(by: 1_500 * Self.ms)
        #expect(world.participants[ana].resumptions == 1)
        #expect(world.participants[ana].interruptions == 0)
        #expect(world.participants[ana].connects == [0])
        // Quiet past the silence limit: told once, then the connection is dropped and resumed.
        world.silent = [0]
        world.advance(by: 6_000 * Self.ms)
        #expect(quiets() == 2)
        #expect(world.participants[ana].interruptions == 1)
    }

    @Test func aRelayLostMidSessionIsLeftForTheNextAndNothingIsLostOrDuplicated() throws {
        var world = FailoverWorld(doors: [0, 0, 0])
        let ana = world.add("ana", create: true)
        let ben = world.add("ben", create: false, randomness: 1)
        world.start(ana)
        world.start(ben)
        #expect(world.participants[ben].connects == [1])
        world.send(from: ana, [1])
        world.kill(1)
        #expect(world.participants[ben].interruptions == 1)
        // Sent while ben is away, on both sides.
        world.send(from: ana, [2])
        world.send(from: ben, [20])
        world.advance(by: 500 * Self.ms)
        #expect(world.participants[ben].connects == [1, 2], "the next relay of the list, once")
        #expect(world.participants[ben].resumptions == 1)
        world.send(from: ana, [3])
        world.advance(by: 100 * Self.ms)
        #expect(world.participants[ben].messages == [[1], [2], [3]])
        #expect(world.participants[ana].messages == [[20]])
        // Resumed on another relay: the datagram path is registered there.
        #expect(world.participants[ben].tokens.count == 2)
        #expect(!world.participants[ben].events.contains { if case .failed = $0 { true } else { false } })
    }

    @Test func everyRelayDownThenOneBackResumesThereWithTheUsualBackoff() throws {
        var world = FailoverWorld(doors: [0, 0, 0])
        let ana = world.add("ana", create: true)
        let ben = world.add("ben", create: false, randomness: 0)
        world.start(ana)
        world.start(ben)
        world.send(from: ana, [1])
        world.up = []
        world.drop(ben)
        world.advance(by: 4_000 * Self.ms)
        let attempts = world.participants[ben].attempts
        // Round the list, 0 → 1 → 2 → 0…, after pauses that double from 50 ms up to 1 s.
        #expect(Array(attempts.map(\.relay).prefix(9)) == [0, 1, 2, 0, 1, 2, 0, 1, 2])
        let pauses = zip(attempts.dropFirst(), attempts).map { ($0.time - $1.time) / Self.ms }
        #expect(Array(pauses.prefix(8)) == [50, 50, 100, 200, 400, 800, 1_000, 1_000])
        world.send(from: ana, [2])
        world.up = [2]
        world.advance(by: 3_000 * Self.ms)
        #expect(world.participants[ben].resumptions == 1)
        #expect(world.participants[ben].attempts.last?.relay == 2)
        #expect(world.participants[ben].messages == [[1], [2]])
        #expect(!world.participants[ben].events.contains { if case .failed = $0 { true } else { false } })
    }

    @Test func whenEveryRelaySaysTheSessionIsGoneTheLinkFailsNamingThem() throws {
        // Independent relays: the session lived on the first, which restarts without it.
        var world = FailoverWorld(doors: [0, 1])
        let ben = world.add("ben", create: true)
        world.start(ben)
        world.restart(0)
        world.advance(by: 1_000 * Self.ms)
        let failure = try #require(world.participants[ben].events.compactMap { if case let .failed(error) = $0 { error } else { nil } }.first)
        #expect(failure.code == .sessionNotFound)
        #expect(failure.detail.contains("\(Self.names[0]): session not found"), "\(failure)")
        #expect(failure.detail.contains("\(Self.names[1]): session not found"), "\(failure)")
        #expect(world.participants[ben].core.isClosed)
        #expect(world.participants[ben].connects == [0, 1, 0])
    }
}

/// Links' cores and relays' cores, with what the relays send handed to the links in order, as a
/// transport would: a link carries out its directives at once (as `RelayClientLink` does), and
/// what reaches it over a connection it has left behind is dropped.
struct FailoverWorld {
    struct Participant {
        var core: RelayLinkCore
        var connection: RelayConnectionID?
        var relay = 0
        var attempts: [(relay: Int, time: Int64)] = []
        var events: [RelayEvent] = []
        var welcome: RelayWelcome?
        var joinError: RelayError?
        var tokens: [[UInt8]] = []

        var connects: [Int] { attempts.map(\.relay) }
        var interruptions: Int { events.count { if case .connectionInterrupted = $0 { true } else { false } } }
        var resumptions: Int { events.count { if case .connectionResumed = $0 { true } else { false } } }
        var messages: [[UInt8]] {
            events.compactMap { if case let .message(_, body, true) = $0 { body } else { nil } }
        }
    }

    private enum Work {
        case relay(Int, [RelayDirective])
        case connected(Int, RelayConnectionID)
        case frame(Int, RelayConnectionID, RelayFrame)
        case closed(Int, RelayConnectionID, String)
    }

    /// The core behind each relay of the list.
    let doors: [Int]
    let names: [String]
    var cores: [RelayCore]
    var participants: [Participant] = []
    /// The relays of the list that accept connections.
    var up: Set<Int>
    /// The relays of the list that accept connections and then never answer.
    var silent: Set<Int> = []
    var now: Int64 = 0
    let sessionID = UUID()
    let sessionKey = SigningKeyPair(seed: [UInt8](repeating: 7, count: 32))
    private var owners: [RelayConnectionID: Int] = [:]
    private var opened: Set<RelayConnectionID> = []
    private var nextConnection: UInt64 = 0
    private var queue: [Work] = []

    init(doors: [Int], names: [String] = RelayLinkFailoverTests.names) {
        self.doors = doors
        self.names = Array(names.prefix(doors.count))
        cores = (0...(doors.max() ?? 0)).map { _ in RelayCore() }
        up = Set(doors.indices)
    }

    mutating func add(_ name: String, create: Bool, randomness: UInt64 = 0) -> Int {
        let request = RelayJoinRequest(sessionID: sessionID, displayName: name, sessionKey: sessionKey, createIfAbsent: create, activity: [])
        participants.append(Participant(core: RelayLinkCore(request: request, configuration: RelayLinkConfiguration(), relays: names,
                                                            randomness: randomness, at: now)))
        return participants.count - 1
    }

    /// Starts `index` joining, as the link's shell does (with only `relay` up, if given), and
    /// runs until nothing moves.
    mutating func start(_ index: Int, onlyOn relay: Int? = nil) {
        let saved = up
        if let relay { up = [relay] }
        perform([.connect(relay: participants[index].core.relay)], for: index)
        drain()
        up = saved
    }

    /// A reliable message to everyone from `index`.
    mutating func send(from index: Int, _ body: [UInt8]) {
        perform(participants[index].core.submit(at: now) { .message(sequence: $0, recipients: .everyone, reliable: true, body: body) }.directives,
                for: index)
        drain()
    }

    /// Relay `relay` dies: it refuses connections and its connections end (its core, shared by
    /// other relays of a cluster, sees them close).
    mutating func kill(_ relay: Int) {
        up.remove(relay)
        for index in participants.indices where participants[index].connection != nil && participants[index].relay == relay {
            drop(index)
        }
    }

    /// Relay `relay` restarts without its sessions.
    mutating func restart(_ relay: Int) {
        kill(relay)
        cores[doors[relay]] = RelayCore()
        up.insert(relay)
    }

    /// `index`'s connection drops under it.
    mutating func drop(_ index: Int) {
        guard let connection = participants[index].connection else { return }
        forget(connection, of: index)
        perform(participants[index].core.onDisconnected("the relay closed the connection", at: now), for: index)
        drain()
    }

    /// Virtual time passes in steps of 10 ms, each core ticking.
    mutating func advance(by duration: Int64) {
        let end = now + duration
        while now < end {
            now += 10 * RelayLinkFailoverTests.ms
            // A silent relay's core is not ticked either: it never answers anything, its own
            // timeouts (a hello that never came) included.
            let silentCores = Set(silent.map { doors[$0] })
            for index in cores.indices where !silentCores.contains(index) { queue.append(.relay(index, cores[index].onTick(at: now))) }
            for index in participants.indices { perform(participants[index].core.onTick(at: now), for: index) }
            drain()
        }
    }

    private mutating func drain() {
        while !queue.isEmpty {
            switch queue.removeFirst() {
            case let .relay(core, directives):
                for directive in directives { perform(directive, from: core) }
            case let .connected(index, connection):
                guard participants[index].connection == connection else { continue }
                perform(participants[index].core.onConnected(at: now), for: index)
            case let .frame(index, connection, frame):
                guard participants[index].connection == connection else { continue }
                perform(participants[index].core.onFrame(frame, at: now), for: index)
            case let .closed(index, connection, reason):
                guard participants[index].connection == connection else { continue }
                forget(connection, of: index)
                perform(participants[index].core.onDisconnected(reason, at: now), for: index)
            }
        }
    }

    /// The link lets go of `connection`; the relay behind it sees it close.
    private mutating func forget(_ connection: RelayConnectionID, of index: Int) {
        participants[index].connection = nil
        owners[connection] = nil
        guard opened.remove(connection) != nil else { return }
        let core = doors[participants[index].relay]
        queue.append(.relay(core, cores[core].onClose(connection, at: now)))
    }

    private mutating func perform(_ directives: [RelayLinkDirective], for index: Int) {
        for directive in directives {
            switch directive {
            case let .connect(relay):
                if let old = participants[index].connection { forget(old, of: index) }
                participants[index].attempts.append((relay, now))
                participants[index].relay = relay
                nextConnection += 1
                let connection = RelayConnectionID(nextConnection)
                participants[index].connection = connection
                owners[connection] = index
                guard up.contains(relay) else {
                    queue.append(.closed(index, connection, "connection refused"))
                    continue
                }
                opened.insert(connection)
                let core = doors[relay]
                queue.append(.relay(core, cores[core].onOpen(connection, entropy: RelayAuthenticator.randomBytes(RelayCore.entropyLength), at: now)))
                queue.append(.connected(index, connection))
            case .disconnect:
                if let connection = participants[index].connection { forget(connection, of: index) }
            case let .transmit(frame):
                guard let connection = participants[index].connection, opened.contains(connection),
                      !silent.contains(participants[index].relay) else { continue }
                let core = doors[participants[index].relay]
                queue.append(.relay(core, cores[core].onFrame(frame, from: connection, at: now)))
            case let .joined(welcome, token):
                participants[index].welcome = welcome
                participants[index].tokens.append(token)
            case let .registerDatagrams(token):
                participants[index].tokens.append(token)
            case let .joinFailed(error):
                participants[index].joinError = error
            case let .emit(event):
                participants[index].events.append(event)
            case .complete, .left, .finish:
                continue
            }
        }
    }

    private mutating func perform(_ directive: RelayDirective, from core: Int) {
        switch directive {
        case let .send(connection, frame):
            guard let index = owners[connection], doors[participants[index].relay] == core else { return }
            queue.append(.frame(index, connection, frame))
        case let .close(connection):
            guard let index = owners[connection], doors[participants[index].relay] == core else { return }
            queue.append(.closed(index, connection, "closed by the relay"))
        default:
            break
        }
    }
}
