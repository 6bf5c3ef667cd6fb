import TandemWire

/// How a `RelayClientLink` reaches a relay: a TCP connection and a UDP socket, or a pipe into an
/// in-memory relay. Every method runs on the link's event loop, and so do the delegate's.
protocol RelayTransport: AnyObject, Sendable {
    /// Who hears what happens.
    var delegate: (any RelayTransportDelegate)? { get set }
    /// The largest unreliable body that goes in a datagram; a larger one goes over the connection.
    var maximumDatagramBody: Int { get }
    /// Opens a new connection to the relay at index `relay` of the link's list (0 when there is
    /// one); the delegate hears `transportConnected` or `transportDisconnected`. Datagrams go to
    /// the relay last connected to.
    func connect(to relay: Int)
    /// Sends frames on the current connection, in order, in as few writes as they fit (dropped
    /// when there is none).
    func transmit(_ frames: [RelayFrame])
    /// Closes the current connection without telling the delegate.
    func disconnect()
    /// Starts registering the datagram path for `token` with the relay last connected to (any
    /// earlier registration is dropped); the delegate hears
    /// `transportDatagramsReady` once the relay confirms.
    func registerDatagrams(token: [UInt8])
    /// Sends a datagram to the relay (at most once; may be lost).
    func sendDatagram(_ datagram: RelayDatagram)
    /// Time passed (registration retries and the like).
    func tick(at now: Int64)
    /// Releases everything for good.
    func close()
    /// Test hook: drops the connection as a network failure would, and refuses to reconnect until
    /// `until` (a time on the loop's clock).
    func interrupt(until: Int64)
}

/// What a `RelayTransport` reports to its link.
protocol RelayTransportDelegate: AnyObject {
    /// The connection is open.
    func transportConnected()
    /// A frame arrived.
    func transportReceived(_ frame: RelayFrame)
    /// The relay sent bytes that do not decode.
    func transportMalformed(_ error: WireError)
    /// The connection could not be opened, or dropped.
    func transportDisconnected(_ reason: String)
    /// A datagram arrived.
    func transportReceived(_ datagram: RelayDatagram)
    /// The relay confirmed the datagram path.
    func transportDatagramsReady()
}

/// A transport's delegate, held weakly (the link owns its transport), in a `Confined` box.
struct WeakTransportDelegate {
    weak var delegate: (any RelayTransportDelegate)?
}
