import TandemNet

/// Which relay a test body runs against: the same bodies run on both.
public enum TransportKind: String, CaseIterable, Sendable, CustomStringConvertible {
    /// The relay core in process, without sockets.
    case inMemory
    /// The real relay server on loopback, reached over TCP and UDP.
    case network

    /// A line for people to read.
    public var description: String { rawValue }
}

/// A relay of either kind, started on loopback (port 0) when it is the real one.
public final class TestRelay: Sendable {
    /// Which kind it is.
    public let kind: TransportKind
    /// How participants reach it.
    public let connector: any RelayConnector
    /// The real server, for the network kind.
    public let server: RelayServer?
    private let inMemory: InMemoryRelay?

    /// Starts a relay of `kind` with the given core and link configurations.
    public init(_ kind: TransportKind, configuration: RelayCoreConfiguration = RelayCoreConfiguration(),
                link: RelayLinkConfiguration = RelayLinkConfiguration()) throws {
        self.kind = kind
        switch kind {
        case .inMemory:
            let relay = try InMemoryRelay(configuration: configuration, linkConfiguration: link)
            inMemory = relay
            server = nil
            connector = relay
        case .network:
            let server = try RelayServer(address: try SocketAddress(host: "127.0.0.1", port: 0), configuration: configuration)
            server.start()
            self.server = server
            inMemory = nil
            connector = NetworkRelayConnector(host: "127.0.0.1", port: server.port, configuration: link)
        }
    }

    /// The host to write into invites.
    public var host: String { "127.0.0.1" }
    /// The port to write into invites: the server's, or 1 for the in-memory relay, which has none.
    public var port: UInt16 { server?.port ?? 1 }

    /// Stops the relay.
    public func shutdown() {
        inMemory?.shutdown()
        server?.stop()
    }
}
