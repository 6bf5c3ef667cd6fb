import TandemClock
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
    /// Set when the core asked to hear once the output queue drains below the low-water mark.
    var awaitingDrain = false
    /// Until then the connection is paused at a fan-out cap: its acknowledgements, pings and
    /// pongs still go to the core as they arrive, and its other frames wait in `held`.
    var pausedUntil: Int64?
    /// The frames that arrived while paused and wait for the pause to end, in order.
    var held: [RelayFrame] = []
    /// The payload bytes of `held`.
    var heldFrameBytes = 0
    /// Set while frames it has buffered wait for the loop's next pass (its pass ran out of
    /// time, `RelayServer.burstBudget`): nothing more is read from it until they are handled.
    var isBacklogged = false
    /// What this connection last added to the server's share of the relay-wide budget.
    var accountedBytes = 0
    /// Whether the server still holds it (false once torn down): checked instead of looking
    /// the connection up again by its id on every write.
    var isOpen = true
    /// Whether it waits in the server's list of connections to flush after this pass.
    var isDirty = false

    /// Measuring mode (`RelayServerStamps`): whether the kernel stamps this socket, the arrival
    /// of the last segment read, the bytes queued on it since it was stamped, and whether its
    /// error queue waits to be read after the pass.
    var isStamped = false
    var lastArrival: KernelStamp?
    var streamBytes = 0
    var stampsPending = false

    /// The host it connects from, when known: what a cut is charged to (`RelayOffenderHoldOff`).
    let peerHost: String?

    init(id: RelayConnectionID, socket: TCPSocket, peerHost: String? = nil) {
        self.id = id
        self.socket = socket
        self.peerHost = peerHost
    }

    /// The bytes this connection holds now: its output queue and its partial frame.
    var heldBytes: Int { output.queuedBytes + reader.buffered + heldFrameBytes }

    /// Whether the socket is read while paused: until `held` holds `limit` bytes.
    func readsWhilePaused(limit: Int) -> Bool { heldFrameBytes < limit }
}
