import TandemWire

/// What the relay core asks its shell to do.
public enum RelayDirective: Sendable {
    /// Send `frame` on the connection, after what is already queued.
    case send(RelayConnectionID, RelayFrame)
    /// Close the connection once what is queued for it has been written.
    case close(RelayConnectionID)
    /// Send `datagram` to wherever the token's holder registered (drop it if nowhere).
    case sendDatagram(RelayToken, RelayDatagram)
    /// The token's holder is gone, or its registration expired; forget where it registered.
    case forgetToken(RelayToken)
    /// The token's holder receives datagrams at this address from now on (a confirmed
    /// registration).
    case bindDatagrams(RelayToken, SocketAddress)
    /// Answer a datagram at the address it came from (a registration's cookie, its
    /// confirmation). Never larger than what it answers.
    case answerDatagram(SocketAddress, RelayDatagram)
    /// Call `onDrained` once this connection's output queue is below the low-water mark
    /// (`RelayCoreConfiguration.drainLowWater`): bulk transfers go on as the reader drains.
    case notifyWhenDrained(RelayConnectionID)
    /// Read nothing more from this connection until this instant: its session is over its
    /// fan-out cap. Frames already received wait too.
    case pauseReading(RelayConnectionID, until: Int64)
}
