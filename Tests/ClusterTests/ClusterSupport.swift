import Foundation
import Synchronization
import TandemCluster
import TandemNATS
import TandemNet
import TandemTestKit
import TandemHarness
import TandemWire

/// A relay in this process, in a cluster: a `RelayServer` on loopback joined to NATS.
struct InProcessRelay {
    let server: RelayServer
    let cluster: ClusterRelay

    static func start(_ url: String, purgeDelay: Duration? = nil, concurrentLoads: Int = 16,
                      configuration: RelayCoreConfiguration = RelayCoreConfiguration(),
                      sweepInterval: Duration? = ClusterRelay.sweepInterval,
                      sessionLogLimit: Int = RelayCore.defaultClusterSessionLogLimit,
                      compactionThreshold: Int? = nil, compactionEntries: Int? = nil) async throws -> InProcessRelay {
        let server = try RelayServer(address: try SocketAddress(host: "127.0.0.1", port: 0), configuration: configuration)
        let cluster = try await ClusterRelay.connect(server, to: try NATSURL(parsing: url), purgeDelay: purgeDelay,
                                                     concurrentLoads: concurrentLoads, sweepInterval: sweepInterval,
                                                     sessionLogLimit: sessionLogLimit, compactionThreshold: compactionThreshold,
                                                     compactionEntries: compactionEntries)
        server.start()
        return InProcessRelay(server: server, cluster: cluster)
    }

    var endpoint: RelayEndpoint { RelayEndpoint(host: "127.0.0.1", port: server.port) }

    func stop() async {
        server.stop(drainTimeout: .milliseconds(100))
        await cluster.stop()
    }
}

/// A participant's link and everything it has heard, for bounded waits.
final class Participant: Sendable {
    let link: any RelayLink
    private let heard: Heard
    private let reader: Task<Void, Never>

    private final class Heard: Sendable {
        let events = Mutex<[RelayEvent]>([])
        func append(_ event: RelayEvent) { events.withLock { $0.append(event) } }
    }

    init(_ link: any RelayLink) {
        self.link = link
        let heard = Heard()
        self.heard = heard
        let events = link.events
        reader = Task {
            for await event in events { heard.append(event) }
        }
    }

    deinit { reader.cancel() }

    /// Joins `session` over `relays`.
    static func join(_ session: UUID, key: SigningKeyPair, _ name: String, relays: [RelayEndpoint], create: Bool = false,
                     seed: UInt64? = nil) async throws -> Participant {
        let connector = NetworkRelayConnector(relays: relays, seed: seed)
        let request = RelayJoinRequest(sessionID: session, displayName: name, sessionKey: key, createIfAbsent: create, activity: [])
        return Participant(try await connector.join(request))
    }

    var events: [RelayEvent] { heard.events.withLock { $0 } }

    /// The bodies of the reliable or unreliable messages heard, in order.
    func messages(reliable: Bool) -> [String] {
        events.compactMap { if case let .message(_, body, mode) = $0, mode == reliable { String(decoding: body, as: UTF8.self) } else { nil } }
    }

    /// What the relay said of its availability, in order (false: unavailable).
    var availability: [Bool] {
        events.compactMap { if case let .relayAvailability(available, _) = $0 { available } else { nil } }
    }

    /// The ordered broadcasts heard, history first.
    var ordered: [RelayOrderedEntry] {
        link.welcome.orderedHistory + events.compactMap { if case let .ordered(entry) = $0 { entry } else { nil } }
    }

    /// Waits until `condition` holds of this participant, at most `seconds`; whether it did.
    @discardableResult
    func wait(_ seconds: Double = 10, until condition: (Participant) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < deadline {
            if condition(self) { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return condition(self)
    }
}

/// A three-node NATS cluster, two relays in this process on it, and a session spanning them: ana
/// created it on the first, ben joined on the second.
struct TwoRelays {
    let nats: NATSTestCluster
    let first: InProcessRelay
    let second: InProcessRelay
    let session = UUID()
    let key = SigningKeyPair()
    let ana: Participant
    let ben: Participant

    static func start() async throws -> TwoRelays {
        let nats = try startNATSCluster()
        let first = try await InProcessRelay.start(nats.url)
        let second = try await InProcessRelay.start(nats.url)
        return try await TwoRelays(nats: nats, first: first, second: second)
    }

    private init(nats: NATSTestCluster, first: InProcessRelay, second: InProcessRelay) async throws {
        self.nats = nats
        self.first = first
        self.second = second
        ana = try await Participant.join(session, key: key, "ana", relays: [first.endpoint], create: true)
        ben = try await Participant.join(session, key: key, "ben", relays: [second.endpoint])
    }

    func stop() async {
        await first.stop()
        await second.stop()
    }
}

/// The cluster every test here starts: three nodes, with a user and password.
func startNATSCluster() throws -> NATSTestCluster {
    try NATSTestCluster(size: 3, authentication: .userPassword(user: "tandem", password: "cluster-secret"))
}

/// One NATS node, started, with a token (stop it when done).
func startNATSNode() throws -> NATSServerProcess {
    let nats = try NATSServerProcess(authentication: .token("cluster-token"))
    try nats.start()
    return nats
}

extension String {
    var bytes: [UInt8] { Array(utf8) }
}
