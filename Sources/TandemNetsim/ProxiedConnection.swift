import TandemNet

/// One TCP client of the proxy and its own connection to the target: two byte streams, each
/// with the chunks that are due and not yet taken by the kernel.
final class ProxiedConnection {
    /// A chunk that is due, with what of it is still unwritten; empty bytes mean end of stream.
    struct Outgoing {
        var bytes: ArraySlice<UInt8>
        let size: Int
        let due: Int64
        var isEnd: Bool { size == 0 }
    }

    let id: UInt64
    let client: TCPSocket
    let server: TCPSocket
    /// Whether the connection to the target is established.
    var connected: Bool
    var closed = false
    /// Due chunks per direction, oldest first.
    var outgoing: [PathDirection: [Outgoing]] = [.up: [], .down: []]
    /// Bytes read from a side and not yet written to the other, per direction: bounds memory.
    var inFlight: [PathDirection: Int] = [.up: 0, .down: 0]
    /// Whether the end of the stream was read, per direction (the sender's side closed).
    var readEnded: Set<PathDirection> = []
    /// Whether the end of the stream was passed on, per direction.
    var writeEnded: Set<PathDirection> = []

    init(id: UInt64, client: TCPSocket, server: TCPSocket, connected: Bool) {
        self.id = id
        self.client = client
        self.server = server
        self.connected = connected
    }

    /// The socket that `direction`'s bytes are read from.
    func source(_ direction: PathDirection) -> TCPSocket { direction == .up ? client : server }
    /// The socket that `direction`'s bytes are written to.
    func destination(_ direction: PathDirection) -> TCPSocket { direction == .up ? server : client }

    /// Whether to read more going `direction`: the target is reachable for downstream bytes, the
    /// stream has not ended, and not too much is waiting.
    func wantsToRead(_ direction: PathDirection, limit: Int) -> Bool {
        guard !readEnded.contains(direction), inFlight[direction, default: 0] < limit else { return false }
        return direction == .up || connected
    }

    /// Whether bytes wait to be written going `direction`.
    func wantsToWrite(_ direction: PathDirection) -> Bool {
        guard direction == .down || connected else { return false }
        return !(outgoing[direction]?.isEmpty ?? true)
    }

    /// Both streams ended and passed on: nothing is left to do.
    var isFinished: Bool { writeEnded.count == 2 }
}
