import Foundation
import Synchronization
import TandemNet
import TandemWire

/// A malicious relay for tests: a TCP proxy in front of a real one that decodes every frame and
/// lets a test see what each participant receives and slip in frames of its own (replays,
/// re-routed or re-attributed bodies), renumbering the relay's sequence so that the victim's
/// link takes them as the relay's. Acknowledgements going back are lowered by the same amount,
/// so that the real relay is never told of more than it sent. One thread, bounded in time.
final class HostileRelayProxy: Sendable {
    /// A frame one participant received, as the relay sent it.
    struct Received: Sendable {
        var participant: String
        var frame: RelayFrame
    }

    private final class Connection: @unchecked Sendable {
        let client: TCPSocket
        let server: TCPSocket
        var name = ""
        var fromClient = RelayFrameReader()
        var fromServer = RelayFrameReader()
        var toClient: [UInt8] = []
        var toServer: [UInt8] = []
        /// How many frames were slipped in: added to the relay's sequence numbers on the way down,
        /// taken from the participant's acknowledgements on the way up.
        var injected: UInt64 = 0
        var lastSequence: UInt64 = 0
        var closed = false

        init(client: TCPSocket, server: TCPSocket) {
            self.client = client
            self.server = server
        }
    }

    private struct State {
        var received: [Received] = []
        var pending: [(participant: String, make: @Sendable (UInt64) -> RelayFrame)] = []
        var stopped = false
    }

    /// The port participants connect to.
    let port: UInt16
    private let listener: TCPSocket
    private let target: SocketAddress
    private let state = Mutex(State())

    /// A proxy on a free loopback port in front of the relay at 127.0.0.1:`targetPort`.
    init(targetPort: UInt16) throws {
        listener = try TCPSocket.listening(on: try SocketAddress(host: "127.0.0.1", port: 0))
        port = try listener.localAddress().port
        target = try SocketAddress(host: "127.0.0.1", port: targetPort)
        let thread = Thread { [self] in run() }
        thread.name = "hostile-relay"
        thread.start()
    }

    /// Everything the relay sent to participants so far (the sequenced frames), in order.
    var received: [Received] { state.withLock { $0.received } }

    /// Slips `make(sequence)` into what `participant` (by display name) receives, as the relay's next frame.
    func inject(to participant: String, _ make: @escaping @Sendable (UInt64) -> RelayFrame) {
        state.withLock { $0.pending.append((participant, make)) }
    }

    func stop() {
        state.withLock { $0.stopped = true }
    }

    private func run() {
        var connections: [Connection] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let deadline = Date().addingTimeInterval(120)
        while !state.withLock({ $0.stopped }), Date() < deadline {
            var busy = false
            while let accepted = try? listener.accept() {
                guard let server = try? TCPSocket(family: target.family) else { accepted.socket.shutdown(); continue }
                _ = try? server.connect(to: target)
                try? accepted.socket.setNoDelay()
                try? server.setNoDelay()
                connections.append(Connection(client: accepted.socket, server: server))
                busy = true
            }
            for connection in connections where !connection.closed {
                busy = pump(connection, &buffer) || busy
            }
            let pending = state.withLock { state in
                defer { state.pending.removeAll() }
                return state.pending
            }
            for (participant, make) in pending {
                guard let connection = connections.first(where: { $0.name == participant && !$0.closed }) else { continue }
                connection.injected += 1
                connection.lastSequence += 1
                connection.toClient += make(connection.lastSequence).encoded()
                busy = true
            }
            for connection in connections where !connection.closed { flush(connection) }
            if !busy { Thread.sleep(forTimeInterval: 0.001) }
        }
        for connection in connections {
            connection.client.shutdown()
            connection.server.shutdown()
        }
    }

    /// Moves what each side sent to the other, rewriting on the way; whether anything moved.
    private func pump(_ connection: Connection, _ buffer: inout [UInt8]) -> Bool {
        var moved = false
        if let count = try? connection.client.read(into: &buffer) {
            if count == 0 { return close(connection) }
            moved = true
            connection.fromClient.append(buffer[..<count])
            while let frame = try? connection.fromClient.next() {
                switch frame {
                case let .hello(hello):
                    connection.name = hello.participant.displayName
                    connection.toServer += frame.encoded()
                case let .ack(through):
                    connection.toServer += RelayFrame.ack(through >= connection.injected ? through - connection.injected : 0).encoded()
                default:
                    connection.toServer += frame.encoded()
                }
            }
        }
        if let count = try? connection.server.read(into: &buffer) {
            if count == 0 { return close(connection) }
            moved = true
            connection.fromServer.append(buffer[..<count])
            while let frame = try? connection.fromServer.next() {
                guard let sequence = frame.sequence else {
                    connection.toClient += frame.encoded()
                    continue
                }
                state.withLock { $0.received.append(Received(participant: connection.name, frame: frame)) }
                connection.lastSequence = sequence + connection.injected
                connection.toClient += HostileRelayProxy.renumbered(frame, connection.lastSequence).encoded()
            }
        }
        return moved
    }

    private func flush(_ connection: Connection) {
        for (socket, keyPath) in [(connection.client, \Connection.toClient), (connection.server, \Connection.toServer)] {
            while !connection[keyPath: keyPath].isEmpty {
                guard let written = try? socket.write(connection[keyPath: keyPath][...]), written > 0 else { break }
                connection[keyPath: keyPath].removeFirst(written)
            }
        }
    }

    private func close(_ connection: Connection) -> Bool {
        connection.closed = true
        connection.client.shutdown()
        connection.server.shutdown()
        return true
    }

    /// `frame` with the relay's sequence number `sequence` instead of its own.
    static func renumbered(_ frame: RelayFrame, _ sequence: UInt64) -> RelayFrame {
        switch frame {
        case let .participantJoined(_, participant): .participantJoined(sequence: sequence, participant: participant)
        case let .participantLeft(_, id): .participantLeft(sequence: sequence, id: id)
        case let .participantAway(_, id, away): .participantAway(sequence: sequence, id: id, away: away)
        case let .delivery(_, sender, reliable, body): .delivery(sequence: sequence, sender: sender, reliable: reliable, body: body)
        case let .attachmentAdded(_, entry): .attachmentAdded(sequence: sequence, entry: entry)
        case let .attachmentRemoved(_, id): .attachmentRemoved(sequence: sequence, id: id)
        case let .loadChunk(_, request, data): .loadChunk(sequence: sequence, request: request, data: data)
        case let .outcome(_, request, fault): .outcome(sequence: sequence, request: request, fault: fault)
        case let .ended(_, by, reason): .ended(sequence: sequence, by: by, reason: reason)
        case let .ordered(_, entry): .ordered(sequence: sequence, entry: entry)
        default: frame
        }
    }
}
