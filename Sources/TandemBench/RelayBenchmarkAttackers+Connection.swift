#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TandemClock
import TandemNet
import TandemWire

/// One attacker's TCP connection to the relay, speaking the relay's own frames by hand: it
/// writes what it is told to as the socket takes it, reads only when told to, and knows the
/// handshake (the one place that changes when the handshake does).
final class AttackConnection {
    private let socket: TCPSocket
    private let clock: SystemClock
    private var pending: [UInt8] = []
    private var offset = 0
    private var pendingFrames = 0
    private var reader = RelayFrameReader()
    private var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    /// The highest sequence number of a delivery read so far: what an acknowledgement names.
    private(set) var highestDelivery: UInt64?

    /// How long connecting and each handshake step may take.
    private static let stepTimeout: Int64 = 5_000_000_000

    /// Connects to `address` from `source` when given (the attackers' own address), waiting
    /// (bounded) until the connection is established.
    init(address: SocketAddress, source: SocketAddress? = nil, clock: SystemClock) throws {
        self.clock = clock
        socket = try TCPSocket(family: address.family)
        if let source { try socket.bind(to: source) }
        if try !socket.connect(to: address) {
            guard try Self.wait(socket.descriptor, events: Int16(POLLOUT), timeout: Self.stepTimeout), socket.pendingError() == 0 else {
                throw SystemCallError(call: "connect", errno: socket.pendingError() == 0 ? ETIMEDOUT : socket.pendingError())
            }
        }
    }

    /// Bytes queued and not yet written.
    var pendingBytes: Int { pending.count - offset }

    /// Queues `frame`.
    func queue(_ frame: RelayFrame) {
        pending.append(contentsOf: frame.encoded())
        pendingFrames += 1
    }

    /// Queues raw bytes (not a whole frame, perhaps).
    func queueRaw(_ bytes: [UInt8]) { pending.append(contentsOf: bytes) }

    /// Writes until the socket would block; returns the bytes and frames written (frames counted
    /// when the queue empties). Throws when the relay has closed or reset the connection.
    func flush() throws -> (bytes: Int, frames: Int) {
        var written = 0
        while offset < pending.count {
            guard let count = try socket.write(pending[offset...]) else { break }
            offset += count
            written += count
        }
        var frames = 0
        if offset == pending.count {
            pending.removeAll(keepingCapacity: pending.capacity <= 1 << 20)
            offset = 0
            frames = pendingFrames
            pendingFrames = 0
        } else if offset > 1 << 20 {
            pending.removeSubrange(0..<offset)
            offset = 0
        }
        return (written, frames)
    }

    /// Reads what is waiting (at most `limit` bytes) and decodes it; returns the frames decoded.
    /// Throws at the end of the stream or on an error.
    func readAvailable(limit: Int) throws -> Int {
        var total = 0
        var frames = 0
        while total < limit {
            guard let count = try socket.read(into: &buffer) else { break }
            guard count > 0 else { throw SystemCallError(call: "recv", errno: ECONNRESET) }
            total += count
            reader.append(buffer[..<count])
            while let frame = try reader.next() {
                frames += 1
                if let sequence = frame.sequence, case .delivery = frame { highestDelivery = max(highestDelivery ?? 0, sequence) }
            }
        }
        return frames
    }

    /// Joins `session` as a new participant with a fresh key of its own: creating it with
    /// `sessionKey` as its verifier, or proving `sessionKey` against the relay's challenge.
    /// Bounded in time; throws on refusal or silence.
    func handshake(session: UUID, sessionKey: SigningKeyPair, create: Bool) throws {
        let identity = SigningKeyPair()
        let participant = RelayParticipantEntry(id: RelayAuthenticator.participantID(for: identity.publicKey),
                                                publicKey: identity.publicKey, displayName: "attacker")
        queue(.hello(RelayHello(sessionID: session, participant: participant, create: create, activity: [], resume: false, received: 0)))
        _ = try flush()
        let challenge = try next()
        guard case let .challenge(nonce, exists) = challenge else { throw SystemCallError(call: "handshake", errno: EPROTO) }
        queue(RelayAuthenticator.answer(nonce: nonce, sessionExists: exists, sessionID: session, sessionKey: sessionKey, identity: identity))
        _ = try flush()
        guard case let .welcome(welcome) = try next() else { throw SystemCallError(call: "handshake", errno: EACCES) }
        // The journal and history that follow a welcome are read with everything else later.
        _ = welcome
    }

    /// The next frame, waiting at most a step's timeout.
    private func next() throws -> RelayFrame {
        let deadline = clock.instant().nanoseconds + Self.stepTimeout
        while true {
            if let frame = try reader.next() { return frame }
            let left = deadline - clock.instant().nanoseconds
            guard left > 0, try Self.wait(socket.descriptor, events: Int16(POLLIN), timeout: left) else {
                throw SystemCallError(call: "handshake", errno: ETIMEDOUT)
            }
            guard let count = try socket.read(into: &buffer) else { continue }
            guard count > 0 else { throw SystemCallError(call: "recv", errno: ECONNRESET) }
            reader.append(buffer[..<count])
        }
    }

    private static func wait(_ descriptor: Int32, events: Int16, timeout: Int64) throws -> Bool {
        var entry = pollfd(fd: descriptor, events: events, revents: 0)
        let milliseconds = Int32(min((timeout + 999_999) / 1_000_000, 60_000))
        return try SystemCall.run("poll") { poll(&entry, 1, milliseconds) }.map { $0 > 0 } ?? false
    }
}
