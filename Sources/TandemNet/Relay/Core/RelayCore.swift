import Foundation
import TandemWire

/// The relay's protocol, with no I/O: sessions, participants, routing, the journal, resumption,
/// limits and flood control.
///
/// It takes events (a connection opened, a frame arrived on it, it closed, a datagram arrived,
/// time passed) and returns directives (send this frame there, close that connection, send this
/// datagram). `RelayServer` carries them out on sockets and `InMemoryRelay` without any, so both
/// transports run exactly this logic. Time comes with each event; randomness (nonces, tokens)
/// comes with `onOpen`, so that the core is deterministic under test.
///
/// Bodies, activity descriptions, metadata and attachment data are opaque bytes: the core routes
/// by frame headers alone.
public struct RelayCore: Sendable {
    /// The timings and limits.
    public let configuration: RelayCoreConfiguration
    var connections: [RelayConnectionID: RelayConnectionState] = [:]
    var sessions: [UUID: RelaySessionState] = [:]
    var tokens: [RelayToken: ParticipantKey] = [:]
    var endedSessions: [UUID: EndedSession] = [:]

    /// A participant by session and identity.
    struct ParticipantKey: Sendable, Hashable {
        var session: UUID
        var participant: UUID
    }

    /// Why a session ended, remembered for a while.
    struct EndedSession: Sendable {
        var by: UUID
        var reason: String
        var at: Int64
    }

    /// A relay core with `configuration`.
    public init(configuration: RelayCoreConfiguration = RelayCoreConfiguration()) {
        self.configuration = configuration
    }

    /// How many random bytes `onOpen` needs: a challenge nonce and a datagram token.
    public static let entropyLength = RelayWireLimits.secretLength + RelayWireLimits.tokenLength

    /// How many sessions are open.
    public var sessionCount: Int { sessions.count }

    /// How many connections are open.
    public var connectionCount: Int { connections.count }

    /// The participants of a session in the order they joined (empty if there is no such session).
    public func participants(of session: UUID) -> [UUID] { sessions[session]?.order ?? [] }

    /// Whether `token` belongs to a participant that is still in a session.
    public func knows(_ token: RelayToken) -> Bool { tokens[token] != nil }

    /// A connection opened at `now`; `entropy` is `entropyLength` fresh random bytes.
    public mutating func onOpen(_ connection: RelayConnectionID, entropy: [UInt8], at now: Int64) -> [RelayDirective] {
        precondition(entropy.count == RelayCore.entropyLength, "onOpen needs \(RelayCore.entropyLength) random bytes")
        connections[connection] = RelayConnectionState(
            nonce: Array(entropy.prefix(RelayWireLimits.secretLength)),
            token: RelayToken(Array(entropy.suffix(RelayWireLimits.tokenLength))),
            openedAt: now, lastHeard: now,
            bucket: TokenBucket(rate: configuration.floodRate, capacity: configuration.floodBurst, now: now))
        return []
    }

    /// A connection closed at `now` (the peer went, or the shell closed it).
    public mutating func onClose(_ connection: RelayConnectionID, at now: Int64) -> [RelayDirective] {
        guard let state = connections.removeValue(forKey: connection) else { return [] }
        guard case let .joined(session, participant) = state.phase,
              sessions[session]?.participants[participant]?.connection == connection else { return [] }
        // Not removed yet: the participant has the grace period to resume.
        sessions[session]?.participants[participant]?.connection = nil
        sessions[session]?.participants[participant]?.disconnectedAt = now
        return []
    }

    /// Bytes on `connection` could not be decoded: the offender gets the error and is dropped.
    public mutating func onMalformed(_ error: RelayWireError, from connection: RelayConnectionID, at now: Int64) -> [RelayDirective] {
        if case let .unsupportedVersion(version) = error.code, case .greeting? = connections[connection]?.phase {
            return refuseVersion(connection, peerVersion: version)
        }
        return drop(connection, fault: RelayFault(.protocolViolation, error.description), at: now)
    }

    /// A frame arrived on `connection` at `now`.
    public mutating func onFrame(_ frame: RelayFrame, from connection: RelayConnectionID, at now: Int64) -> [RelayDirective] {
        guard var state = connections[connection] else { return [] }
        if case .closing = state.phase { return [] }
        state.lastHeard = now
        let paid = state.bucket.take(RelayCoreConfiguration.cost(payload: frame.payloadSize), at: now)
        connections[connection] = state
        guard paid else {
            return drop(connection, fault: RelayFault(.flooding, "more than \(Int(configuration.floodRate)) frames a second"), at: now)
        }
        switch state.phase {
        case .greeting:
            return greet(connection, frame, at: now)
        case let .challenged(hello, exists):
            return answer(connection, frame, hello: hello, sessionExists: exists, nonce: state.nonce, at: now)
        case let .joined(session, participant):
            return handle(frame, from: ParticipantKey(session: session, participant: participant), on: connection, at: now)
        case .closing:
            return []
        }
    }

    /// An unreliable message arrived in a datagram at `now`.
    public mutating func onDatagram(_ datagram: RelayDatagram, at now: Int64) -> [RelayDirective] {
        guard case let .unreliable(tokenBytes, recipients, body) = datagram,
              let key = tokens[RelayToken(tokenBytes)],
              let session = sessions[key.session],
              let sender = session.participants[key.participant] else { return [] }
        // A datagram over the sender's rate is dropped, not punished: datagrams may be lost anyway.
        if let connection = sender.connection {
            let paid = connections[connection]?.bucket.take(RelayCoreConfiguration.cost(payload: body.count), at: now) ?? false
            guard paid else { return [] }
        }
        return recipientIDs(recipients, in: session, excluding: key.participant).compactMap { id in
            guard let token = session.participants[id]?.token else { return nil }
            return .sendDatagram(token, .delivery(sender: key.participant, body: body))
        }
    }

    /// Time passed: acknowledge what arrived, time out handshakes and silent connections, and
    /// remove participants gone longer than the grace period.
    public mutating func onTick(at now: Int64) -> [RelayDirective] {
        var directives: [RelayDirective] = []
        for (id, state) in connections {
            switch state.phase {
            case .greeting, .challenged:
                if now - state.openedAt > configuration.handshakeTimeout {
                    directives += refuse(id, RelayFault(.protocolViolation, "no hello and proof within the handshake timeout"))
                }
            case .joined:
                if now - state.lastHeard > configuration.idleTimeout {
                    directives.append(.close(id))
                    directives += onClose(id, at: now)
                } else if now - state.lastProbe >= configuration.roundTripProbeInterval {
                    directives.append(probe(id, at: now))
                }
            case .closing:
                break
            }
        }
        var expired: [ParticipantKey] = []
        for (sessionID, session) in sessions {
            for (participantID, participant) in session.participants {
                if let since = participant.disconnectedAt, now - since >= configuration.gracePeriod {
                    expired.append(ParticipantKey(session: sessionID, participant: participantID))
                } else if let connection = participant.connection, participant.received > participant.acknowledged {
                    sessions[sessionID]?.participants[participantID]?.acknowledged = participant.received
                    directives.append(.send(connection, .ack(participant.received)))
                }
            }
        }
        for key in expired { directives += remove(key) }
        endedSessions = endedSessions.filter { now - $0.value.at < configuration.endedMemory }
        return directives
    }

    // MARK: Dropping and removing

    /// Refuses a connection that is not admitted: the fault, then close.
    mutating func refuse(_ connection: RelayConnectionID, _ fault: RelayFault) -> [RelayDirective] {
        connections[connection]?.phase = .closing
        return [.send(connection, .refusal(fault)), .close(connection)]
    }

    /// Drops a connection for bad behaviour: the fault as an error, close, and the participant on
    /// it (if any) is removed at once, without a grace period.
    mutating func drop(_ connection: RelayConnectionID, fault: RelayFault, at now: Int64) -> [RelayDirective] {
        guard let state = connections[connection] else { return [] }
        connections[connection]?.phase = .closing
        var directives: [RelayDirective] = [.send(connection, .error(fault)), .close(connection)]
        if case let .joined(session, participant) = state.phase {
            directives += remove(ParticipantKey(session: session, participant: participant), closing: false)
        }
        return directives
    }

    /// Removes a participant from its session: the others hear it left; its connection (if any)
    /// is closed; an empty session is gone.
    mutating func remove(_ key: ParticipantKey, closing: Bool = true) -> [RelayDirective] {
        guard var session = sessions[key.session],
              let participant = session.participants.removeValue(forKey: key.participant) else { return [] }
        session.order.removeAll { $0 == key.participant }
        session.rememberFormer(participant.entry)
        tokens[participant.token] = nil
        var directives: [RelayDirective] = [.forgetToken(participant.token)]
        if closing, let connection = participant.connection {
            connections[connection]?.phase = .closing
            directives.append(.close(connection))
        }
        if session.order.isEmpty {
            sessions[key.session] = nil
            return directives
        }
        sessions[key.session] = session
        return directives + broadcast(in: key.session, to: session.order) { .participantLeft(sequence: $0, id: key.participant) }
    }

    // MARK: Routing

    /// Appends a frame to each recipient's outbox, and sends it to those connected. A recipient
    /// whose outbox overflows is removed as too slow.
    mutating func broadcast(in sessionID: UUID, to recipients: [UUID], _ make: (UInt64) -> RelayFrame) -> [RelayDirective] {
        var directives: [RelayDirective] = []
        var overflowing: [UUID] = []
        for id in recipients {
            guard var participant = sessions[sessionID]?.participants[id] else { continue }
            let frame = participant.outbox.append(make)
            if participant.outbox.count > configuration.maximumOutboxFrames
                || participant.outbox.bodyBytes > configuration.maximumOutboxBytes {
                overflowing.append(id)
            }
            if let connection = participant.connection { directives.append(.send(connection, frame)) }
            sessions[sessionID]?.participants[id] = participant
        }
        for id in overflowing {
            let key = ParticipantKey(session: sessionID, participant: id)
            if let connection = sessions[sessionID]?.participants[id]?.connection {
                directives += [.send(connection, .error(RelayFault(.disconnected, "too far behind: \(configuration.maximumOutboxFrames) frames unacknowledged")))]
            }
            directives += remove(key)
        }
        return directives
    }

    /// The participants a recipient list names, in join order, without the sender or strangers.
    func recipientIDs(_ recipients: RelayRecipientList, in session: RelaySessionState, excluding sender: UUID) -> [UUID] {
        switch recipients {
        case .everyone:
            return session.order.filter { $0 != sender }
        case let .only(ids):
            let wanted = Set(ids)
            return session.order.filter { $0 != sender && wanted.contains($0) }
        }
    }
}
