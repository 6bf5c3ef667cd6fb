import Foundation

/// What a server says about itself in its `INFO` line: who it is, its limits, and the other
/// servers of its cluster that clients may reconnect to.
public struct NATSServerInfo: Sendable, Hashable, Decodable {
    /// The server's unique identifier.
    public var serverID: String
    /// The server's configured name (JetStream names stream leaders by it).
    public var serverName: String?
    /// The server's version, such as `2.9.10`.
    public var version: String?
    /// The largest message (headers and payload) the server accepts, in bytes.
    public var maxPayload: Int
    /// Whether the server supports headers (`HPUB`, `HMSG`).
    public var headers: Bool
    /// Whether the server wants credentials in `CONNECT`.
    public var authRequired: Bool
    /// Other servers of the cluster (`HOST:PORT`), announced for reconnection.
    public var connectURLs: [String]
    /// Whether JetStream is enabled on the server.
    public var jetStream: Bool
    /// The cluster's name, when the server is part of one.
    public var cluster: String?

    private enum CodingKeys: String, CodingKey {
        case serverID = "server_id", serverName = "server_name", version, maxPayload = "max_payload"
        case headers, authRequired = "auth_required", connectURLs = "connect_urls", jetStream = "jetstream", cluster
    }

    /// Decodes the JSON of an `INFO` line; absent fields take NATS's defaults (1 MiB payloads).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        serverID = try container.decodeIfPresent(String.self, forKey: .serverID) ?? ""
        serverName = try container.decodeIfPresent(String.self, forKey: .serverName)
        version = try container.decodeIfPresent(String.self, forKey: .version)
        maxPayload = try container.decodeIfPresent(Int.self, forKey: .maxPayload) ?? NATSServerInfo.defaultMaxPayload
        headers = try container.decodeIfPresent(Bool.self, forKey: .headers) ?? false
        authRequired = try container.decodeIfPresent(Bool.self, forKey: .authRequired) ?? false
        connectURLs = try container.decodeIfPresent([String].self, forKey: .connectURLs) ?? []
        jetStream = try container.decodeIfPresent(Bool.self, forKey: .jetStream) ?? false
        cluster = try container.decodeIfPresent(String.self, forKey: .cluster)
    }

    /// NATS's default `max_payload`: 1 MiB.
    public static let defaultMaxPayload = 1_048_576
}
