#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import TandemClock
import TandemNet
import TandemWire

/// One participant of `RelayDeliveryProbe`: a TCP connection speaking the relay's frames by
/// hand, joined with a key of its own, that acknowledges and pings as a link does (by the
/// link's default timings, `RelayLinkConfiguration`) and reads on the probe's one epoll thread.
/// No link core, no event stream, no task: what it measures is the relay's delivery.
///
/// As a link, it acknowledges at once every 64 frames, else once an interval on a phase of its
/// own, and pings only a relay silent for `pingSilence` that owes it no acknowledgement not yet
/// late. It sends no acknowledgement on a message (a probe sends or receives, not both).
///
/// Written from two threads (the pacer sends messages, the reading thread acknowledgements and
/// pings), so writes take a lock; only the reading thread reads, under a lock of its own that
/// nobody else takes (one uncontended lock a wake-up).
final class RelayProbeConnection: Sendable {
    let socket: TCPSocket
    /// What the pacing and the reading thread share: the next sequence number, and since when
    /// the relay owes an acknowledgement of what was sent (nil: nothing owed).
    private struct Sending {
        var next: UInt64 = 1
        var owedSince: Int64?
    }

    private let writes = Mutex(Sending())
    /// The reading thread's.
    private struct Reading {
        var reader = RelayFrameReader()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var highestSequence: UInt64 = 0
        var acknowledged: UInt64 = 0
        /// When the owed acknowledgement falls due on the tick, nil while nothing is owed.
        var acknowledgementDue: Int64?
        var lastHeard = SystemClock().instant().nanoseconds
        var lastPing = SystemClock().instant().nanoseconds
    }

    private let reading = Mutex(Reading())
    /// This connection's phase within the acknowledgement interval.
    private let phase = Int64.random(in: 0..<RelayProbeConnection.link.acknowledgementInterval)

    /// The timings a link follows, which the probe follows too.
    private static let link = RelayLinkConfiguration()

    /// How long connecting and each handshake step may take.
    private static let stepTimeout: Int64 = 5_000_000_000
    /// A link acknowledges at once every 64 frames; so does the probe.
    private static let acknowledgeEvery: UInt64 = 64

    /// Connects to `address` and joins `session` (creating it when `create`), proving
    /// `sessionKey`; bounded in time, throws on refusal or silence.
    init(address: SocketAddress, session: UUID, sessionKey: SigningKeyPair, create: Bool, name: String) throws {
        socket = try TCPSocket(family: address.family)
        try socket.setNoDelay()
        if try !socket.connect(to: address) {
            guard try Self.wait(socket.descriptor, events: Int16(POLLOUT), timeout: Self.stepTimeout), socket.pendingError() == 0 else {
                throw RelayBenchmarkError("cannot connect to \(address): errno \(socket.pendingError())")
            }
        }
        let identity = SigningKeyPair()
        let participant = RelayParticipantEntry(id: RelayAuthenticator.participantID(for: identity.publicKey),
                                                publicKey: identity.publicKey, displayName: name)
        try write(.hello(RelayHello(sessionID: session, participant: participant, create: create, activity: [], resume: false, received: 0)))
        guard case let .challenge(nonce, exists) = try next() else { throw RelayBenchmarkError("\(name): no challenge") }
        try write(RelayAuthenticator.answer(nonce: nonce, sessionExists: exists, sessionID: session, sessionKey: sessionKey, identity: identity))
        guard case .welcome = try next() else { throw RelayBenchmarkError("\(name): not welcomed") }
    }

    /// A reader on `socket`, already connected to a plain sender, with no handshake: the
    /// floor's (`RelayDeliveryFloor`), read and acknowledged exactly as a joined one is.
    init(connected socket: TCPSocket) {
        self.socket = socket
    }

    /// Sends a reliable message to everyone else in the session at `now`, numbered in turn. Any
    /// thread.
    func sendMessage(_ body: [UInt8], at now: Int64) throws {
        try writes.withLock { (sending: inout Sending) throws in
            let frame = RelayFrame.message(sequence: sending.next, recipients: .everyone, reliable: true, body: body)
            sending.next += 1
            if sending.owedSince == nil { sending.owedSince = now }
            try Self.writeAll(frame.encoded(), to: socket)
        }
    }

    /// Sends a frame that carries no sequence number (an acknowledgement, a ping). Any thread.
    func write(_ frame: RelayFrame) throws {
        try writes.withLock { _ throws in try Self.writeAll(frame.encoded(), to: socket) }
    }

    /// Reads what waits at `now` and hands `delivered` every delivery's body; acknowledges
    /// every 64. Reading thread only. Throws at the end of the stream or on an error.
    func receive(at now: Int64, _ delivered: ([UInt8]) -> Void) throws {
        try reading.withLock { (state: inout Reading) throws in try receive(at: now, &state, delivered) }
    }

    private func receive(at now: Int64, _ state: inout Reading, _ delivered: ([UInt8]) -> Void) throws {
        for _ in 0..<16 {
            guard let count = try socket.read(into: &state.buffer) else { break }
            guard count > 0 else { throw RelayBenchmarkError("the relay closed a probe connection") }
            state.lastHeard = now
            state.reader.append(state.buffer[..<count])
            while let frame = try state.reader.next() {
                if let sequence = frame.sequence {
                    // Owed from now: due at the next instant of this connection's phase.
                    if state.highestSequence == state.acknowledged {
                        let interval = Self.link.acknowledgementInterval
                        state.acknowledgementDue = phase + ((now - phase) / interval + 1) * interval
                    }
                    state.highestSequence = max(state.highestSequence, sequence)
                }
                switch frame {
                case let .delivery(_, _, _, body):
                    delivered(body)
                case let .ping(value):
                    // Answered as a link answers: the relay times its round trip by it.
                    try write(.pong(value))
                case let .ack(through):
                    writes.withLock { sending in sending.owedSince = through + 1 >= sending.next ? nil : now }
                case let .error(fault):
                    throw RelayBenchmarkError("the relay dropped a probe connection: \(fault)")
                default:
                    continue
                }
            }
            if count < state.buffer.count { break }
        }
        if state.highestSequence >= state.acknowledged + Self.acknowledgeEvery { try acknowledge(&state) }
    }

    /// Acknowledges every sequenced frame read so far. Reading thread only.
    func acknowledge() throws {
        try reading.withLock { (state: inout Reading) throws in try acknowledge(&state) }
    }

    private func acknowledge(_ state: inout Reading) throws {
        guard state.highestSequence > state.acknowledged else { return }
        state.acknowledged = state.highestSequence
        state.acknowledgementDue = nil
        try write(.ack(state.highestSequence))
    }

    /// Time passed, as a link's tick: the acknowledgement when due, a ping when the relay has
    /// been silent and owes nothing that is not yet late. Reading thread only.
    func tick(at now: Int64) throws {
        try reading.withLock { (state: inout Reading) throws in
            if let due = state.acknowledgementDue, now >= due { try acknowledge(&state) }
            guard now - state.lastPing >= Self.link.pingInterval, now - state.lastHeard >= Self.link.pingSilence else { return }
            let wait = Self.link.acknowledgementWait
            let lastHeard = state.lastHeard
            let owedInTime = writes.withLock { sending in
                sending.owedSince.map { now - $0 < wait && $0 + wait - lastHeard < Self.link.quietLimit } ?? false
            }
            guard !owedInTime else { return }
            state.lastPing = now
            try write(.ping(UInt64(bitPattern: now)))
        }
    }

    /// Leaves the session and closes the connection.
    func leave() {
        try? writes.withLock { (sending: inout Sending) throws in
            try Self.writeAll(RelayFrame.leave(sequence: sending.next).encoded(), to: socket)
        }
        socket.shutdownWrite()
    }

    // MARK: Inside

    /// The next frame of the handshake, waiting at most a step's timeout.
    private func next() throws -> RelayFrame {
        try reading.withLock { (state: inout Reading) throws in try next(&state) }
    }

    private func next(_ state: inout Reading) throws -> RelayFrame {
        let deadline = SystemClock().instant().nanoseconds + Self.stepTimeout
        while true {
            if let frame = try state.reader.next() {
                if case let .refusal(fault) = frame { throw RelayBenchmarkError("refused: \(fault)") }
                return frame
            }
            let left = deadline - SystemClock().instant().nanoseconds
            guard left > 0, try Self.wait(socket.descriptor, events: Int16(POLLIN), timeout: left) else {
                throw RelayBenchmarkError("the relay did not answer the handshake in time")
            }
            guard let count = try socket.read(into: &state.buffer) else { continue }
            guard count > 0 else { throw RelayBenchmarkError("the relay closed the connection during the handshake") }
            state.reader.append(state.buffer[..<count])
        }
    }

    /// Writes all of `bytes`, waiting (bounded) while the socket is full: frames here are small
    /// and the relay reads, so a wait is rare and short.
    static func writeAll(_ bytes: [UInt8], to socket: TCPSocket) throws {
        var offset = 0
        while offset < bytes.count {
            if let written = try socket.write(bytes[offset...]) {
                offset += written
            } else if try !wait(socket.descriptor, events: Int16(POLLOUT), timeout: stepTimeout) {
                throw RelayBenchmarkError("the relay stopped reading a probe connection")
            }
        }
    }

    static func wait(_ descriptor: Int32, events: Int16, timeout: Int64) throws -> Bool {
        var entry = pollfd(fd: descriptor, events: events, revents: 0)
        let milliseconds = Int32(min((timeout + 999_999) / 1_000_000, 60_000))
        return try SystemCall.run("poll") { poll(&entry, 1, milliseconds) }.map { $0 > 0 } ?? false
    }
}
