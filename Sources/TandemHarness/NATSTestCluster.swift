import Foundation

/// A three-node (or larger) `nats-server` cluster on loopback for a test: routes between the
/// nodes, JetStream on each with its own temporary store, the same authentication on all.
/// Kill a node and start it again with `node(_:)`'s `kill()` and `start()`; `stop()` (or
/// `deinit`) ends them all and removes the stores.
public final class NATSTestCluster: Sendable {
    /// The nodes, `n1`, `n2`, `n3`….
    public let nodes: [NATSServerProcess]
    private let directory: URL

    /// Starts `size` nodes and waits until each is healthy (JetStream's meta leader elected).
    public init(size: Int = 3, authentication: NATSServerProcess.Authentication = .none, timeout: Double = 30) throws {
        precondition(size >= 1, "a cluster has at least one node")
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tandem-nats-cluster-\(UUID().uuidString)")
        let ports = try NATSServerProcess.freePorts(size * 3)
        let routePorts = (0..<size).map { ports[$0 * 3 + 2] }
        var nodes: [NATSServerProcess] = []
        for index in 0..<size {
            nodes.append(try NATSServerProcess(name: "n\(index + 1)", port: ports[index * 3], monitorPort: ports[index * 3 + 1],
                                               route: (routePorts[index], "tandem", routePorts), authentication: authentication,
                                               maximumPayload: nil, directory: directory))
        }
        self.nodes = nodes
        do {
            for node in nodes { try node.start(waitUntilReady: false) }
            for node in nodes { try node.waitUntilHealthy(timeout: timeout) }
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    /// A URL naming every node, with the cluster's credentials.
    public var url: String { NATSServerProcess.url(ports: nodes.map(\.port), authentication: nodes[0].authentication) }

    /// The node named `name` (as JetStream names a stream's leader).
    public func node(named name: String) -> NATSServerProcess? { nodes.first { $0.name == name } }

    /// Stops every node and removes the stores.
    public func stop() {
        for node in nodes { node.stop() }
        try? FileManager.default.removeItem(at: directory)
    }
}
