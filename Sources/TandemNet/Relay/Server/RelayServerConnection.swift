import TandemWire

/// One TCP connection as the relay server holds it: the socket, the bytes read so far and the
/// frames waiting to be written. Confined to the server's loop.
final class RelayServerConnection {
    let id: RelayConnectionID
    let socket: TCPSocket
    var reader = RelayFrameReader()
    var output = RelayFrameOutput()
    /// Set once the core asked to close: nothing more is read into the core, what is queued is
    /// written, then the write side is shut and the rest discarded until the peer closes.
    var closingSince: Int64?
    var writeShut = false

    init(id: RelayConnectionID, socket: TCPSocket) {
        self.id = id
        self.socket = socket
    }
}
