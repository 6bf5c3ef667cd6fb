/// How a NATS connection behaves: its keepalive, timeouts, reconnection and buffers. Every
/// duration is in nanoseconds of the connection's clock.
public struct NATSConfiguration: Sendable, Hashable {
    /// The name the client gives itself in `CONNECT` (shown by the server's monitoring).
    public var name: String?
    /// How long a connection attempt (TCP, `INFO`, `CONNECT` and the first `PONG`) may take.
    public var connectTimeout: Int64 = 2_000_000_000
    /// How often a `PING` goes out on an idle-or-not connection.
    public var pingInterval: Int64 = 30_000_000_000
    /// How many `PING`s may be unanswered before the connection counts as stale and is dropped.
    public var maximumPingsOutstanding = 2
    /// The wait before the first reconnection round once every server has been tried.
    public var reconnectWait: Int64 = 100_000_000
    /// The longest wait between reconnection rounds (the wait doubles each round up to it).
    public var maximumReconnectWait: Int64 = 2_000_000_000
    /// The share of each wait added at random (0 to 1), so that many clients do not return at once.
    public var reconnectJitter = 0.2
    /// Reconnection rounds over the server list before giving up for good; nil never gives up.
    public var maximumReconnectRounds: Int? = nil
    /// Rounds over the server list before the first connection gives up (`connect` fails).
    public var initialConnectRounds = 1
    /// Whether to add the servers the cluster announces (`connect_urls`) to the list.
    public var discoverServers = true
    /// The most bytes kept while disconnected, sent on the next connection; beyond it a
    /// publish fails with `pendingBufferFull`.
    public var maximumPendingBytes = 8 * 1024 * 1024
    /// The default time a request waits for its reply.
    public var requestTimeout: Int64 = 5_000_000_000
    /// How many messages a subscription's async sequence holds for a slow reader before it
    /// drops the newest (and counts them).
    public var subscriptionBufferLimit = 65_536

    /// The defaults above.
    public init() {}
}
