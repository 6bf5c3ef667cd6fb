import Synchronization

/// Joins sessions on a `RelayServer` over TCP and UDP, at one relay or one of several.
///
/// Links run on a small group of event loop threads shared by the whole process, so that a
/// program with many links (a benchmark, a relay test) does not need a thread for each, and no
/// blocking call ever runs on Swift's cooperative pool.
///
/// Given several relays (an invite's `relays`), a link that creates its session starts at the
/// first; one that joins starts at a random one (drawn from `seed` when one is given, so that a
/// test knows which), and each moves to the next relay of the list when a connection fails, is
/// lost, or finds the session missing (`RelayLinkCore`).
public struct NetworkRelayConnector: RelayConnector {
    /// The relays, in order (at least one).
    public let relays: [RelayEndpoint]
    /// The links' timings.
    public let configuration: RelayLinkConfiguration
    /// Where joiners' random starting relays come from.
    private let starts: StartingRelays

    /// The first relay's numeric address (`localhost` means 127.0.0.1).
    public var host: String { relays[0].host }
    /// The first relay's port, for TCP and UDP alike.
    public var port: UInt16 { relays[0].port }

    /// A connector for the relay at `host` and `port`.
    public init(host: String, port: UInt16, configuration: RelayLinkConfiguration = RelayLinkConfiguration()) {
        self.init(relays: [RelayEndpoint(host: host, port: port)], configuration: configuration)
    }

    /// A connector for the relays `relays` (numeric addresses; `localhost` means 127.0.0.1),
    /// whose joiners start at a relay drawn from `seed`, or from the system's random source
    /// when it is nil. An empty list is a programming error: it traps.
    public init(relays: [RelayEndpoint], configuration: RelayLinkConfiguration = RelayLinkConfiguration(), seed: UInt64? = nil) {
        precondition(!relays.isEmpty, "a connector needs a relay")
        self.relays = relays
        self.configuration = configuration
        starts = StartingRelays(seed: seed)
    }

    /// Joins (or creates) the session that `request` names.
    public func join(_ request: RelayJoinRequest) async throws(RelayError) -> any RelayLink {
        try await join(request, on: try RelayClientLoops.next())
    }
}

extension NetworkRelayConnector: ParticipantLoopConnector {
    /// The next of the process's client loops.
    package func participantLoop() throws(RelayError) -> any SerialEventLoop { try RelayClientLoops.next() }

    /// Joins on `loop` when it is one of the process's real loops, else on the next of them.
    package func join(_ request: RelayJoinRequest, on chosen: any SerialEventLoop) async throws(RelayError) -> any RelayLink {
        var addresses: [SocketAddress] = []
        for relay in relays {
            do {
                addresses.append(try SocketAddress(host: relay.host, port: relay.port))
            } catch {
                throw RelayError(.unreachable, "\(relay): \(error)")
            }
        }
        let loop: EventLoop
        if let given = chosen as? EventLoop { loop = given } else { loop = try RelayClientLoops.next() }
        let link = RelayClientLink(request: request, configuration: configuration, loop: loop,
                                   transport: NetworkRelayTransport(addresses: addresses, loop: loop),
                                   relays: relays.map(\.description), randomness: starts.next())
        try await link.join()
        return link
    }
}

/// Random draws for the relay a link starts at: from a `SeededRandom` (so that a test knows the
/// sequence) or from the system's generator.
final class StartingRelays: Sendable {
    private let state: Mutex<SeededRandom?>

    init(seed: UInt64?) { state = Mutex(seed.map(SeededRandom.init(seed:))) }

    func next() -> UInt64 {
        state.withLock { generator in
            guard generator != nil else {
                var system = SystemRandomNumberGenerator()
                return system.next()
            }
            return generator!.next()
        }
    }
}

/// The process's client event loops, each started when first handed out (a process with one
/// participant runs one) and kept for the process's life: the participants' loops.
package enum RelayClientLoops {
    private static let count = 2
    private static let state = Mutex<(loops: [EventLoop], next: Int)>(([], 0))

    /// The next loop, round the process's few: a participant's loop.
    package static func participantLoop() throws(RelayError) -> any SerialEventLoop { try next() }

    static func next() throws(RelayError) -> EventLoop {
        try state.withLock { (state) throws(RelayError) -> EventLoop in
            let index = state.next
            if index == state.loops.count {
                do {
                    let loop = try EventLoop(name: "tandem-link-\(index)")
                    loop.start()
                    state.loops.append(loop)
                } catch {
                    throw RelayError(.unreachable, "cannot start a client event loop: \(error)")
                }
            }
            state.next = (index + 1) % count
            return state.loops[index]
        }
    }
}
