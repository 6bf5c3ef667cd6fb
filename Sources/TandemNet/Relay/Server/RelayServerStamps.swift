import TandemClock
import TandemWire

/// The relay server's measuring mode (`RelayServer.measureKernelTimestamps()`): every accepted
/// connection stamped by the kernel, each delivery frame's place in its stream noted against the
/// arrival of the frame it answers, and the error queues of the connections just written read
/// after the loop's pass. Confined to the server's loop.
///
/// Its own costs, and what it is not: it reads with recvmsg(2) for the arrival stamp, encodes
/// each queued frame once more for its exact size, and reads the error queues; the last is
/// timed on the loop's thread (`drainTime`) so that the relay's CPU per delivery can leave it
/// out. Connections whose queues are dropped (an offender's) lose their byte count, and their
/// copies stay unmatched.
final class RelayServerStamps {
    /// What has been seen since the ledger was last taken.
    private var ledger = RelayTimestampLedger()
    /// The arrival of the frame whose directives are being carried out, and its record once
    /// its first delivery is queued.
    private var arrival: KernelStamp?
    private var record: Int?
    private var scratch: [UInt8] = []
    private var pending: [RelayServerConnection] = []
    private let reader = SocketTimestamping()
    /// The loop thread's CPU time spent reading error queues.
    private(set) var drainTime = TimeSpan.zero
    /// Connections stamping could not be enabled on, and error queues that failed to read.
    private(set) var failures = 0
    /// Frames of every kind queued on stamped connections since the ledger was last taken.
    private var framesQueued = 0
    /// The peer hosts whose connections are stamped; nil stamps every connection.
    private let hosts: Set<String>?

    /// A measuring mode that stamps the connections from `hosts`, or every connection when nil:
    /// a record arriving on a connection not stamped is not in the ledger, nor is a copy queued
    /// on one.
    init(hosts: Set<String>? = nil) {
        self.hosts = hosts
    }

    /// Stamps a newly accepted connection, before anything is written to it.
    func enable(_ connection: RelayServerConnection) {
        if let hosts, !hosts.contains(connection.peerHost ?? "") { return }
        do {
            try SocketTimestamping.enable(connection.socket.descriptor)
            connection.isStamped = true
        } catch {
            failures += 1
        }
    }

    /// Reads `connection` as `TCPSocket.read(into:)` does, keeping the arrival of what was read.
    func read(_ connection: RelayServerConnection, into buffer: inout [UInt8]) throws(SystemCallError) -> Int? {
        guard connection.isStamped else { return try connection.socket.read(into: &buffer) }
        guard let (count, stamp) = try SocketTimestamping.receive(connection.socket.descriptor, into: &buffer) else { return nil }
        if let stamp { connection.lastArrival = stamp }
        return count
    }

    /// A frame read from `connection` goes to the core: the deliveries it queues are its copies.
    func begin(_ connection: RelayServerConnection) {
        arrival = connection.lastArrival
        record = nil
    }

    /// The frame's directives are carried out.
    func end() {
        arrival = nil
        record = nil
    }

    /// `frame` was queued on `connection`: its bytes are counted, and a delivery is a copy of
    /// the record being carried out.
    func queued(_ frame: RelayFrame, on connection: RelayServerConnection) {
        guard connection.isStamped else { return }
        scratch.removeAll(keepingCapacity: true)
        frame.encode(appendingTo: &scratch)
        connection.streamBytes += scratch.count
        framesQueued += 1
        guard case .delivery = frame, let arrival else { return }
        let record = record ?? ledger.arrive(at: arrival)
        self.record = record
        ledger.send(record: record, stream: Int(connection.id.value), lastByte: connection.streamBytes - 1)
    }

    /// `connection` was written to (or reported an error, which a waiting error queue raises):
    /// its error queue is read after the pass.
    func written(_ connection: RelayServerConnection) {
        guard connection.isStamped, !connection.stampsPending else { return }
        connection.stampsPending = true
        pending.append(connection)
    }

    /// Reads the error queues of the connections written since the last call.
    func drain() {
        guard !pending.isEmpty else { return }
        let started = SocketTimestamping.threadCPUTime()
        for connection in pending {
            connection.stampsPending = false
            guard connection.isOpen else { continue }
            do {
                try reader.drain(connection.socket.descriptor, stream: Int(connection.id.value), into: &ledger)
            } catch {
                failures += 1
            }
        }
        pending.removeAll(keepingCapacity: true)
        drainTime += SocketTimestamping.threadCPUTime() - started
    }

    /// What was seen since the last call (and the frames of every kind queued meanwhile), and a
    /// fresh ledger for what follows.
    func take() -> (ledger: RelayTimestampLedger, frames: Int) {
        defer {
            ledger = RelayTimestampLedger()
            framesQueued = 0
        }
        return (ledger, framesQueued)
    }
}
