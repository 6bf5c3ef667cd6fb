import TandemNet

/// One UDP client of the proxy: its address and the socket that speaks for it to the target, so
/// that the target's replies come back to that socket and go to that client alone.
final class DatagramFlow {
    /// Where the client sends from, and where its replies go.
    let client: SocketAddress
    /// Connected to the target; the kernel drops datagrams from anyone else.
    let socket: UDPSocket
    /// When the flow last carried a datagram either way.
    var lastActivity: Int64
    /// Set once the flow is forgotten, so that datagrams still queued for it are dropped.
    var closed = false
    /// Arrival numbers per direction, and the highest delivered so far, to count reordering.
    var nextSequence: [PathDirection: UInt64] = [.up: 0, .down: 0]
    var highestDelivered: [PathDirection: UInt64] = [:]

    init(client: SocketAddress, socket: UDPSocket, now: Int64) {
        self.client = client
        self.socket = socket
        lastActivity = now
    }

    /// Numbers the next datagram arriving going `direction`.
    func sequence(_ direction: PathDirection) -> UInt64 {
        let value = nextSequence[direction, default: 0]
        nextSequence[direction] = value + 1
        return value
    }

    /// Notes a delivery; true when a datagram that arrived later was already delivered.
    func deliver(_ sequence: UInt64, _ direction: PathDirection) -> Bool {
        if let highest = highestDelivered[direction], sequence < highest { return true }
        highestDelivered[direction] = sequence
        return false
    }
}
