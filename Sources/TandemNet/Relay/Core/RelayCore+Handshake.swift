import Foundation
import TandemWire

extension RelayCore {
    /// The hello: challenge the participant, or refuse at once when there is nothing to join.
    mutating func greet(_ connection: RelayConnectionID, _ frame: RelayFrame, at now: Int64) -> [RelayDirective] {
        guard case let .hello(hello) = frame else {
            return drop(connection, fault: RelayFault(.protocolViolation, "expected a hello, got frame \(frame.typeName)"), at: now)
        }
        guard hello.activity.count <= RelayLimits.maximumMetadata else {
            return refuse(connection, RelayFault(.tooLarge, "activity description of \(hello.activity.count) bytes"))
        }
        let session = sessions[hello.sessionID]
        if hello.resume {
            guard let session else {
                if let ended = endedSessions[hello.sessionID] {
                    return refuse(connection, RelayFault(.sessionEnded, ended.reason))
                }
                return refuse(connection, RelayFault(.sessionNotFound, hello.sessionID.uuidString))
            }
            guard session.participants[hello.participant.id] != nil else {
                return refuse(connection, RelayFault(.disconnected, "participant \(hello.participant.id.uuidString) was gone longer than the grace period"))
            }
        } else if session == nil, !hello.create {
            if let ended = endedSessions[hello.sessionID] {
                return refuse(connection, RelayFault(.sessionEnded, ended.reason))
            }
            return refuse(connection, RelayFault(.sessionNotFound, hello.sessionID.uuidString))
        }
        let nonce = connections[connection]?.nonce ?? []
        connections[connection]?.phase = .challenged(hello, sessionExists: session != nil)
        return [.send(connection, .challenge(nonce: nonce, sessionExists: session != nil))]
    }

    /// The answer to the challenge: a proof for an existing session, or a claim creating one.
    mutating func answer(_ connection: RelayConnectionID, _ frame: RelayFrame, hello: RelayHello, sessionExists: Bool,
                         nonce: [UInt8], at now: Int64) -> [RelayDirective] {
        let wrongSecret = RelayFault(.wrongSecret, hello.sessionID.uuidString)
        switch frame {
        case let .proof(mac):
            guard let session = sessions[hello.sessionID] else {
                return refuse(connection, RelayFault(.sessionNotFound, hello.sessionID.uuidString))
            }
            let expected = RelayAuthenticator.proof(key: session.key, nonce: nonce, sessionID: hello.sessionID,
                                                    participantID: hello.participant.id)
            guard RelayAuthenticator.equal(mac, expected) else { return refuse(connection, wrongSecret) }
            return admit(connection, hello, created: false, at: now)
        case let .claim(key):
            guard hello.create, !hello.resume, !sessionExists else {
                return drop(connection, fault: RelayFault(.protocolViolation, "a claim answers only a creator's challenge for a new session"), at: now)
            }
            // Another creator may have made the session since the challenge: the same key joins it.
            if let session = sessions[hello.sessionID] {
                guard RelayAuthenticator.equal(key, session.key) else { return refuse(connection, wrongSecret) }
                return admit(connection, hello, created: false, at: now)
            }
            guard sessions.count < configuration.maximumSessions else {
                return refuse(connection, RelayFault(.limitReached, "the relay holds \(configuration.maximumSessions) sessions"))
            }
            endedSessions[hello.sessionID] = nil
            sessions[hello.sessionID] = RelaySessionState(id: hello.sessionID, key: key, activity: hello.activity)
            return admit(connection, hello, created: true, at: now)
        default:
            return drop(connection, fault: RelayFault(.protocolViolation, "expected a proof or a claim, got frame \(frame.typeName)"), at: now)
        }
    }

    /// Admits a proven participant: a fresh join or a resumption.
    private mutating func admit(_ connection: RelayConnectionID, _ hello: RelayHello, created: Bool, at now: Int64) -> [RelayDirective] {
        guard var session = sessions[hello.sessionID], let state = connections[connection] else { return [] }
        let id = hello.participant.id
        if hello.resume {
            return resume(connection, hello, at: now)
        }
        guard session.participants[id] == nil else {
            return refuse(connection, RelayFault(.protocolViolation, "participant \(id.uuidString) is already in the session"))
        }
        guard session.order.count < min(configuration.maximumParticipants, RelayWireLimits.maximumParticipants) else {
            return refuse(connection, RelayFault(.limitReached, "the session holds \(configuration.maximumParticipants) participants"))
        }
        let others = session.order
        session.order.append(id)
        session.participants[id] = RelaySessionState.Participant(entry: hello.participant, token: state.token, connection: connection)
        sessions[hello.sessionID] = session
        tokens[state.token] = ParticipantKey(session: hello.sessionID, participant: id)
        connections[connection]?.phase = .joined(session: hello.sessionID, participant: id)
        let welcome = RelayWelcomeFrame(
            sessionID: session.id, created: created, resumed: false, received: 0, token: state.token.bytes,
            activity: session.activity, participants: session.order.compactMap { session.participants[$0]?.entry },
            attachmentCount: session.attachmentOrder.count, orderedHistoryCount: session.orderedHistory.count)
        var directives: [RelayDirective] = [.send(connection, .welcome(welcome))]
        for attachmentID in session.attachmentOrder {
            if let attachment = session.attachments[attachmentID] {
                directives.append(.send(connection, .journalEntry(attachment.entry)))
            }
        }
        directives += historyFrames(of: session, to: connection)
        directives.append(probe(connection, at: now))
        return directives + broadcast(in: session.id, to: others) { .participantJoined(sequence: $0, participant: hello.participant) }
    }

    /// Moves a participant to a new connection and sends again what it has not acknowledged.
    private mutating func resume(_ connection: RelayConnectionID, _ hello: RelayHello, at now: Int64) -> [RelayDirective] {
        let id = hello.participant.id
        guard var participant = sessions[hello.sessionID]?.participants[id] else {
            return refuse(connection, RelayFault(.disconnected, "participant \(id.uuidString) was gone longer than the grace period"))
        }
        var directives: [RelayDirective] = []
        // A resumption over a half-open old connection replaces it.
        if let old = participant.connection, old != connection {
            connections[old]?.phase = .closing
            directives += [.send(old, .error(RelayFault(.disconnected, "replaced by a newer connection"))), .close(old)]
        }
        participant.connection = connection
        participant.disconnectedAt = nil
        participant.outbox.acknowledge(through: hello.received)
        participant.acknowledged = participant.received
        sessions[hello.sessionID]?.participants[id] = participant
        connections[connection]?.phase = .joined(session: hello.sessionID, participant: id)
        let welcome = RelayWelcomeFrame(
            sessionID: hello.sessionID, created: false, resumed: true, received: participant.received,
            token: participant.token.bytes, activity: [], participants: [], attachmentCount: 0)
        directives.append(.send(connection, .welcome(welcome)))
        for frame in participant.outbox.pending { directives.append(.send(connection, frame)) }
        directives.append(probe(connection, at: now))
        return directives
    }
}
