import Foundation
import TandemWire

/// One connection as the relay core holds it.
struct RelayConnectionState: Sendable {
    enum Phase: Sendable {
        /// Waiting for the hello.
        case greeting
        /// Challenged; waiting for a proof or a claim.
        case challenged(RelayHello, sessionExists: Bool)
        /// Admitted as this participant of this session.
        case joined(session: UUID, participant: UUID)
        /// Refused or dropped; waiting for the shell to close it.
        case closing
    }

    var phase = Phase.greeting
    let nonce: [UInt8]
    /// The token a participant admitted on this connection gets if it is new.
    let token: RelayToken
    let openedAt: Int64
    /// The peer's numeric address (no port), nil when the transport has none (in memory).
    var peer: SocketAddress?
    /// The peer's numeric host: where its datagrams must come from.
    var peerHost: String?
    /// The source the fair shares and the caps per source count it under (nil in memory).
    var source: RelaySource?
    /// Whether a hello arrived on it: a connection that has sent none is closed after
    /// `RelayCoreConfiguration.helloTimeout`.
    var greeted = false
    var lastHeard: Int64
    var bucket: TokenBucket
    /// When the relay sent the ping whose pong it awaits (the ping carries this time), if any.
    var pingSentAt: Int64?
    /// When the relay last pinged this connection to measure its round trip.
    var lastProbe: Int64 = 0
}
