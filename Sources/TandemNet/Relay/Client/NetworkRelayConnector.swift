import Synchronization

/// Joins sessions on a `RelayServer` over TCP and UDP.
///
/// Links run on a small group of event loop threads shared by the whole process, so that a
/// program with many links (a benchmark, a relay test) does not need a thread for each, and no
/// blocking call ever runs on Swift's cooperative pool.
public struct NetworkRelayConnector: RelayConnector {
    /// The relay's numeric address (`localhost` means 127.0.0.1).
    public let host: String
    /// The relay's port, for TCP and UDP alike.
    public let port: UInt16
    /// The links' timings.
    public let configuration: RelayLinkConfiguration

    /// A connector for the relay at `host` and `port`.
    public init(host: String, port: UInt16, configuration: RelayLinkConfiguration = RelayLinkConfiguration()) {
        self.host = host
        self.port = port
        self.configuration = configuration
    }

    /// Joins (or creates) the session that `request` names.
    public func join(_ request: RelayJoinRequest) async throws(RelayError) -> any RelayLink {
        let address: SocketAddress
        do {
            address = try SocketAddress(host: host, port: port)
        } catch {
            throw RelayError(.unreachable, "\(error)")
        }
        let loop = try RelayClientLoops.next()
        let link = RelayClientLink(request: request, configuration: configuration, loop: loop,
                                   transport: NetworkRelayTransport(address: address, loop: loop))
        try await link.join()
        return link
    }
}

/// The process's client event loops, started on first use and kept for the process's life.
enum RelayClientLoops {
    private static let count = 2
    private static let state = Mutex<(loops: [EventLoop], next: Int)>(([], 0))

    static func next() throws(RelayError) -> EventLoop {
        try state.withLock { (state) throws(RelayError) -> EventLoop in
            if state.loops.isEmpty {
                for index in 0..<count {
                    do {
                        let loop = try EventLoop(name: "tandem-link-\(index)")
                        loop.start()
                        state.loops.append(loop)
                    } catch {
                        throw RelayError(.unreachable, "cannot start a client event loop: \(error)")
                    }
                }
            }
            state.next = (state.next + 1) % state.loops.count
            return state.loops[state.next]
        }
    }
}
