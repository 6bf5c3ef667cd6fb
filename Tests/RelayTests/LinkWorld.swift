import Foundation
@testable import TandemNet
import TandemWire

/// Links' pure cores joined to one relay core by a loss-free, instant network, ticked every
/// 10 ms of virtual time, counting the pings each way.
struct LinkWorld {
    enum Count: Hashable {
        case linkPing(Int)
        case relayPing(Int)
        /// Acknowledgements a link sent, and those of them that no data frame carried (none in
        /// the same pass: a write of control frames only).
        case linkAck(Int)
        case linkAckAlone(Int)
        /// Acknowledgements the relay sent a link, and those no data frame carried.
        case relayAck(Int)
        case relayAckAlone(Int)
    }

    struct Link {
        var core: RelayLinkCore
        let id: UUID
        let connection: RelayConnectionID
    }

    /// What one step of time brought.
    struct Step {
        var quiet: Set<Int> = []
        var disconnected: Set<Int> = []
    }

    var relay = RelayCore()
    var links: [Link] = []
    var now: Int64 = 0
    let sessionID = UUID()
    let sessionKey = SigningKeyPair(seed: [UInt8](repeating: 9, count: 32))
    var counts: [Count: Int] = [:]
    var quiet: Set<Int> = []
    var closed: Set<Int> = []
    var maximumUnacknowledged: [Int: Int] = [:]
    /// How many messages each link delivered.
    var messages: [Int: Int] = [:]
    /// When each link last sent an acknowledgement, and last received one from the relay.
    var lastLinkAck: [Int: Int64] = [:]
    var lastRelayAck: [Int: Int64] = [:]
    /// Whether the relay's frames stop reaching the links.
    var relaySilent = false
    private var step = Step()

    mutating func add(_ name: String, create: Bool) -> Int {
        let request = RelayJoinRequest(sessionID: sessionID, displayName: name, sessionKey: sessionKey, createIfAbsent: create, activity: [])
        let core = RelayLinkCore(request: request, configuration: RelayLinkConfiguration(), at: now)
        links.append(Link(core: core, id: request.participant.id, connection: RelayConnectionID(UInt64(links.count + 1))))
        return links.count - 1
    }

    mutating func join(_ index: Int) {
        run(index, links[index].core.onTick(at: now))
        let entropy = [UInt8](repeating: UInt8(index + 1), count: RelayCore.entropyLength)
        relay(relay.onOpen(links[index].connection, entropy: entropy, at: now, peer: nil))
        run(index, links[index].core.onConnected(at: now))
    }

    mutating func send(from index: Int, _ body: [UInt8]) {
        run(index, links[index].core.submit(at: now) { .message(sequence: $0, recipients: .everyone, reliable: true, body: body) }.directives)
        maximumUnacknowledged[index] = max(maximumUnacknowledged[index] ?? 0, links[index].core.unacknowledgedCount)
    }

    /// How many frames the relay has sent `index` that it has not acknowledged.
    func relayOutbox(of index: Int) -> Int {
        relay.sessions[sessionID]?.participants[links[index].id]?.outbox.count ?? 0
    }

    /// Ticks the relay and every link every 10 ms for `span`.
    mutating func advance(by span: Int64) -> Step {
        step = Step()
        let end = now + span
        while now < end {
            now += 10 * ControlFrameScheduleTests.ms
            relay(relay.onTick(at: now))
            for index in links.indices { run(index, links[index].core.onTick(at: now)) }
        }
        return step
    }

    private mutating func run(_ index: Int, _ directives: [RelayLinkDirective]) {
        let carried = directives.contains { if case let .transmit(frame) = $0 { frame.sequence != nil } else { false } }
        for directive in directives {
            if case .transmit(.ack) = directive {
                counts[.linkAck(index), default: 0] += 1
                if !carried { counts[.linkAckAlone(index), default: 0] += 1 }
                lastLinkAck[index] = now
            }
            switch directive {
            case let .transmit(frame):
                if case .ping = frame { counts[.linkPing(index), default: 0] += 1 }
                relay(relay.onFrame(frame, from: links[index].connection, at: now))
            case .emit(.connectionQuiet):
                quiet.insert(index)
                step.quiet.insert(index)
            case let .emit(.message(_, _, _)):
                messages[index, default: 0] += 1
            case .disconnect:
                closed.insert(index)
                step.disconnected.insert(index)
            default:
                break
            }
        }
    }

    private mutating func relay(_ directives: [RelayDirective]) {
        var carrying: Set<RelayConnectionID> = []
        for case let .send(connection, frame) in directives where frame.sequence != nil { carrying.insert(connection) }
        for directive in directives {
            guard case let .send(connection, frame) = directive,
                  let index = links.firstIndex(where: { $0.connection == connection }) else { continue }
            if case .ping = frame { counts[.relayPing(index), default: 0] += 1 }
            if case .ack = frame {
                counts[.relayAck(index), default: 0] += 1
                if !carrying.contains(connection) { counts[.relayAckAlone(index), default: 0] += 1 }
                lastRelayAck[index] = now
            }
            if relaySilent { continue }
            run(index, links[index].core.onFrame(frame, at: now))
        }
    }
}
