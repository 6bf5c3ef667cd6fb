/// What `$JS.API.STREAM.INFO` says about a stream: its configuration, its state, its cluster.
public struct JetStreamStreamInfo: Sendable, Hashable, Decodable {
    /// The configuration in force.
    public var configuration: JetStreamStreamConfiguration
    /// How many messages it holds, and its first and last sequences.
    public var state: State
    /// Its leader and replicas, in a cluster.
    public var cluster: Cluster?

    /// A stream's message counts and sequences.
    public struct State: Sendable, Hashable, Decodable {
        /// Messages held.
        public var messages: UInt64
        /// Bytes held.
        public var bytes: UInt64
        /// The first sequence held.
        public var firstSequence: UInt64
        /// The last sequence assigned.
        public var lastSequence: UInt64
        /// How many consumers the stream has (nil when the server does not say).
        public var consumers: Int?

        private enum CodingKeys: String, CodingKey {
            case messages, bytes, firstSequence = "first_seq", lastSequence = "last_seq", consumers = "consumer_count"
        }
    }

    /// Where a replicated stream lives.
    public struct Cluster: Sendable, Hashable, Decodable {
        /// The cluster's name.
        public var name: String?
        /// The server name of the stream's leader (nil during an election).
        public var leader: String?
        /// The other replicas' server names.
        public var replicas: [String]

        private enum CodingKeys: String, CodingKey { case name, leader, replicas }
        private struct Replica: Decodable { var name: String }

        /// Decodes the cluster part of a stream info.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decodeIfPresent(String.self, forKey: .name)
            leader = try container.decodeIfPresent(String.self, forKey: .leader)
            replicas = try container.decodeIfPresent([Replica].self, forKey: .replicas)?.map(\.name) ?? []
        }
    }

    private enum CodingKeys: String, CodingKey { case configuration = "config", state, cluster }
}
