import TandemWire

/// What the relay core asks its shell to do.
public enum RelayDirective: Sendable {
    /// Send `frame` on the connection, after what is already queued.
    case send(RelayConnectionID, RelayFrame)
    /// Close the connection once what is queued for it has been written.
    case close(RelayConnectionID)
    /// Send `datagram` to wherever the token's holder registered (drop it if nowhere).
    case sendDatagram(RelayToken, RelayDatagram)
    /// The token's holder is gone; forget where it registered.
    case forgetToken(RelayToken)
}
