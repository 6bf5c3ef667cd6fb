/// What happened to a connection, for a program that watches it (a relay that says "NATS is
/// unavailable" while it is away, for instance).
public enum NATSConnectionEvent: Sendable {
    /// The first connection is up: the handshake with this server finished.
    case connected(NATSServerAddress, NATSServerInfo)
    /// The connection to this server broke, for this reason; reconnection starts.
    case disconnected(NATSServerAddress, String)
    /// A connection is up again, to this server; subscriptions were renewed and what was
    /// buffered meanwhile was sent.
    case reconnected(NATSServerAddress, NATSServerInfo)
    /// The server reported an error that did not end the connection (a permissions violation).
    case serverError(String)
    /// The connection is closed for good: by its owner (nil), or because it gave up (the error).
    case closed(NATSError?)
}
