import TandemWire

/// What a link's pure core asks its shell to do.
enum RelayLinkDirective: Sendable {
    /// Open a new connection to the relay at this index of the link's list.
    case connect(relay: Int)
    /// Close the current connection (the core has already noted it as gone).
    case disconnect
    /// Send a frame on the current connection.
    case transmit(RelayFrame)
    /// The first join is complete.
    case joined(RelayWelcome, token: [UInt8])
    /// Resumed on another relay (or with another token): register the datagram path there.
    case registerDatagrams(token: [UInt8])
    /// The first join failed; the link is closed.
    case joinFailed(RelayError)
    /// Hand an event to the consumer.
    case emit(RelayEvent)
    /// A request (add, remove, load) is done: the loaded data, or empty.
    case complete(request: UInt64, Result<[UInt8], RelayError>)
    /// `leave()` is done.
    case left
    /// The link is closed for good: finish the events and release the transport.
    case finish
}
