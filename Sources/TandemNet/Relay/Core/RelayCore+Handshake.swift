import Foundation
import TandemWire

extension RelayCore {
    /// The hello: challenge the participant, or refuse at once when there is nothing to join.
    mutating func greet(_ connection: RelayConnectionID, _ frame: RelayFrame, at now: Int64) -> [RelayDirective] {
        guard case let .hello(hello) = frame else {
            return drop(connection, fault: RelayFault(.protocolViolation, "expected a hello, got frame \(frame.typeName)"), at: now)
        }
        guard hello.participant.presence.count <= RelayWireLimits.maximumPresence, !hello.participant.departed else {
            return refuse(connection, RelayFault(.tooLarge, "a presence of \(hello.participant.presence.count) bytes, or a departed participant's hello"))
        }
        guard hello.activity.count <= RelayLimits.maximumMetadata else {
            return refuse(connection, RelayFault(.tooLarge, "activity description of \(hello.activity.count) bytes"))
        }
        // Identities are self-certifying: nobody may speak for an identity with another key.
        guard RelayAuthenticator.isIdentity(hello.participant.id, of: hello.participant.publicKey) else {
            return refuse(connection, RelayFault(.wrongIdentity, "participant \(hello.participant.id.uuidString) is not the identity of its public key"))
        }
        // Cluster hook: a session this relay has not loaded waits for its log's replay.
        if let waiting = clusterAwaitSession(connection, hello) { return waiting }
        let session = sessions[hello.sessionID]
        if session?.removed.contains(hello.participant.id) == true {
            return refuse(connection, RelayFault(.removed, "participant \(hello.participant.id.uuidString) was removed from the session"))
        }
        // A session whose invites expire admits a joiner with a valid ticket alone; those
        // admitted before resume without one.
        if !hello.resume, let session, session.ticketed,
           let refusal = ticketRefusal(hello, keys: session.ticketKeys, at: now) {
            return refuse(connection, RelayFault(.inviteExpired, refusal))
        }
        if hello.resume {
            guard let session else {
                if let ended = endedSessions[hello.sessionID] {
                    return refuse(connection, RelayFault(.sessionEnded, ended.reason))
                }
                return refuse(connection, RelayFault(.sessionNotFound, hello.sessionID.uuidString))
            }
            guard let known = session.participants[hello.participant.id] else {
                return refuse(connection, session.resumptionRefusal(hello.participant.id))
            }
            guard RelayAuthenticator.equal(known.entry.publicKey, hello.participant.publicKey) else {
                return refuse(connection, RelayFault(.wrongIdentity, "participant \(hello.participant.id.uuidString) joined with another key"))
            }
        } else if session == nil {
            // An ended session stays ended while it is remembered: nobody (an observer who saw
            // its identity, say) may create it again and catch its participants' resumptions.
            if let ended = endedSessions[hello.sessionID] {
                return refuse(connection, RelayFault(.sessionEnded, ended.reason))
            }
            if !hello.create { return refuse(connection, RelayFault(.sessionNotFound, hello.sessionID.uuidString)) }
            // Creation-key hook (RelayCore+CreationKey.swift): only its own host creates here.
            if let fault = creationRefusal(hello) { return refuse(connection, fault) }
        }
        let nonce = connections[connection]?.nonce ?? []
        connections[connection]?.phase = .challenged(hello, sessionExists: session != nil)
        return [.send(connection, .challenge(nonce: nonce, sessionExists: session != nil))]
    }

    /// The answer to the challenge: a proof for an existing session, or a claim creating one.
    ///
    /// Both carry two signatures of the challenge: one with the session's key, checked with the
    /// session's verifier (for a claim, with the verifier it registers, so that nobody claims a
    /// verifier without holding its key), and one with the participant's own key, checked with
    /// the hello's public key, which is the one its identity certifies. A resumption therefore
    /// needs the participant's own key: the session's secret alone cannot take a seat.
    mutating func answer(_ connection: RelayConnectionID, _ frame: RelayFrame, hello: RelayHello, sessionExists: Bool,
                         nonce: [UInt8], at now: Int64) -> [RelayDirective] {
        let wrongSecret = RelayFault(.wrongSecret, hello.sessionID.uuidString)
        let wrongIdentity = RelayFault(.wrongIdentity, "the signature of participant \(hello.participant.id.uuidString) does not verify")
        func message(_ signer: RelayAuthenticator.Signer) -> [UInt8] {
            RelayAuthenticator.challengeMessage(signer, nonce: nonce, sessionID: hello.sessionID, participantID: hello.participant.id,
                                                participantKey: hello.participant.publicKey)
        }
        func signedByParticipant(_ signature: [UInt8]) -> Bool {
            SigningKeyPair.verify(signature, of: message(.participant), publicKey: hello.participant.publicKey)
        }
        switch frame {
        case let .proof(sessionSignature, participantSignature):
            // Only the verifier is read: no copy of the session may be alive while `admit`
            // appends to the others' outboxes.
            guard let verifier = sessions[hello.sessionID]?.key else {
                return refuse(connection, RelayFault(.sessionNotFound, hello.sessionID.uuidString))
            }
            // A participant still present resumes with any epoch's proof: it was admitted
            // before the change. A joiner needs the newest epoch's.
            let formerKeys = hello.resume ? sessions[hello.sessionID]?.formerKeys ?? [] : []
            guard ([verifier] + formerKeys).contains(where: { SigningKeyPair.verify(sessionSignature, of: message(.session), publicKey: $0) }) else {
                return refuse(connection, wrongSecret)
            }
            guard signedByParticipant(participantSignature) else { return refuse(connection, wrongIdentity) }
            return admit(connection, hello, created: false, at: now)
        case let .claim(verifier, sessionSignature, participantSignature):
            guard hello.create, !hello.resume, !sessionExists else {
                return drop(connection, fault: RelayFault(.protocolViolation, "a claim answers only a creator's challenge for a new session"), at: now)
            }
            guard SigningKeyPair.verify(sessionSignature, of: message(.session), publicKey: verifier) else {
                return refuse(connection, wrongSecret)
            }
            guard signedByParticipant(participantSignature) else { return refuse(connection, wrongIdentity) }
            // A creator's ticket makes the session's invites expire; one that does not admit
            // now starts nothing.
            if hello.ticket != nil, let refusal = ticketRefusal(hello, keys: [hello.participant.publicKey], at: now) {
                return refuse(connection, RelayFault(.inviteExpired, refusal))
            }
            // Cluster hook: the creation goes through the log.
            if cluster != nil { return clusterAdmit(connection, hello, verifier: verifier, at: now) }
            // Another creator may have made the session since the challenge: the same verifier,
            // proven by a signature it checks, joins it.
            if let registered = sessions[hello.sessionID]?.key {
                guard RelayAuthenticator.equal(verifier, registered) else { return refuse(connection, wrongSecret) }
                return admit(connection, hello, created: false, at: now)
            }
            guard sessions.count < configuration.maximumSessions else {
                return refuse(connection, RelayFault(.limitReached, "the relay holds \(configuration.maximumSessions) sessions"))
            }
            sessions[hello.sessionID] = RelaySessionState(id: hello.sessionID, key: verifier, activity: hello.activity)
            sessions[hello.sessionID]?.operatorKeys = [hello.participant.publicKey]
            sessions[hello.sessionID]?.ticketKeys = [hello.participant.publicKey]
            sessions[hello.sessionID]?.ticketed = hello.ticket != nil
            // The activity description lives as long as the session: the budget counts it.
            account(hello.sessionID, hello.activity.count)
            return admit(connection, hello, created: true, at: now)
        default:
            return drop(connection, fault: RelayFault(.protocolViolation, "expected a proof or a claim, got frame \(frame.typeName)"), at: now)
        }
    }

    /// Why `hello`'s ticket does not admit at `now` under any of `keys`, on the relay's Unix clock.
    private func ticketRefusal(_ hello: RelayHello, keys: [[UInt8]], at now: Int64) -> String? {
        let unixSeconds = UInt64(max(0, (now &+ unixOffset) / 1_000_000_000))
        return InviteTicket.refusal(of: hello.ticket, sessionID: hello.sessionID, publicKeys: keys, now: unixSeconds)
    }

    /// A first frame in another protocol version: one line naming both, in a refusal that the
    /// other side can read when its version is one whose refusal this build can write.
    mutating func refuseVersion(_ connection: RelayConnectionID, peerVersion: UInt8) -> [RelayDirective] {
        connections[connection]?.phase = .closing
        let fault = RelayFault(.versionMismatch, "relay speaks protocol v\(RelayFrame.version), this tandem speaks v\(peerVersion)")
        let frame: RelayFrame = peerVersion >= RelayFrame.oldestRefusableVersion
            ? .versionRefusal(peerVersion: peerVersion, fault) : .refusal(fault)
        return [.send(connection, frame), .close(connection)]
    }

    /// Admits a proven participant: a fresh join or a resumption.
    ///
    /// The session's tables change in place, and the read-only look at the session that the
    /// welcome needs ends before the others hear of the newcomer: a copy of the session alive
    /// while their outboxes grow would make each append copy a whole outbox.
    private mutating func admit(_ connection: RelayConnectionID, _ hello: RelayHello, created: Bool, at now: Int64) -> [RelayDirective] {
        let sessionID = hello.sessionID
        // Cluster hook: the admission goes through the log.
        if cluster != nil { return clusterAdmit(connection, hello, verifier: nil, at: now) }
        guard let others = sessions[sessionID]?.order, let state = connections[connection] else { return [] }
        let id = hello.participant.id
        if hello.resume {
            return resume(connection, hello, at: now)
        }
        guard sessions[sessionID]?.participants[id] == nil else {
            return refuse(connection, RelayFault(.protocolViolation, "participant \(id.uuidString) is already in the session"))
        }
        guard others.count < min(configuration.maximumParticipants, RelayWireLimits.maximumParticipants) else {
            return refuse(connection, RelayFault(.limitReached, "the session holds \(configuration.maximumParticipants) participants"))
        }
        sessions[sessionID]?.order.append(id)
        // Back again: no longer a former participant, and what its memory held is released.
        account(sessionID, -(sessions[sessionID]?.forgetFormer(id) ?? 0))
        sessions[sessionID]?.participants[id] = RelaySessionState.Participant(entry: hello.participant, token: state.token, connection: connection)
        sessions[sessionID]?.participants[id]?.lastAcknowledgement = AcknowledgementSchedule.start(id, at: now,
                                                                                                 interval: configuration.acknowledgementInterval)
        tokens[state.token] = ParticipantKey(session: sessionID, participant: id)
        connections[connection]?.phase = .joined(session: sessionID, participant: id)
        var directives: [RelayDirective]
        let overflow: [RelayParticipantEntry]
        // Who is away already (connection closed by its peer, within its grace): a joiner hears
        // it in frames right after its welcome, as the others heard it when it happened.
        let away: [UUID]
        do {
            guard let session = sessions[sessionID] else { return [] }
            away = others.filter { session.participants[$0]?.away == true }
            overflow = session.welcomeOverflow
            let welcome = RelayWelcomeFrame(
                sessionID: session.id, created: created, resumed: false, received: 0, token: state.token.bytes,
                activity: session.activity, participants: session.welcomeList,
                attachmentCount: session.attachmentOrder.count, orderedHistoryCount: session.orderedHistory.count,
                firstOrders: session.firstOrders)
            directives = [.send(connection, .welcome(welcome))]
            for attachmentID in session.attachmentOrder {
                if let attachment = session.attachments[attachmentID] {
                    directives.append(.send(connection, .journalEntry(attachment.entry)))
                }
            }
            directives += historyFrames(of: session, to: connection)
        }
        // Those present whom the welcome could not list follow it, each in a frame of its own
        // (never the joiner itself, which knows it is there).
        for entry in overflow where entry.id != id {
            directives += broadcast(in: sessionID, to: [id], at: now) { .participantJoined(sequence: $0, participant: entry) }
        }
        for awayID in away {
            directives += broadcast(in: sessionID, to: [id], at: now) { .participantAway(sequence: $0, id: awayID, away: true) }
        }
        directives.append(probe(connection, at: now))
        return directives + broadcast(in: sessionID, to: others) { .participantJoined(sequence: $0, participant: hello.participant) }
    }

    /// Moves a participant to a new connection and sends again what it has not acknowledged.
    private mutating func resume(_ connection: RelayConnectionID, _ hello: RelayHello, at now: Int64) -> [RelayDirective] {
        let id = hello.participant.id
        guard var participant = sessions[hello.sessionID]?.participants[id] else {
            return refuse(connection, sessions[hello.sessionID]?.resumptionRefusal(id)
                ?? RelayFault(.disconnected, "participant \(id.uuidString) was gone longer than the grace period"))
        }
        var directives: [RelayDirective] = []
        // A resumption over a half-open old connection replaces it.
        if let old = participant.connection, old != connection {
            connections[old]?.phase = .closing
            directives += [.send(old, .error(RelayFault(.disconnected, "replaced by a newer connection"))), .close(old)]
        }
        participant.connection = connection
        participant.disconnectedAt = nil
        let wasAway = participant.away
        participant.away = false
        participant.outbox.acknowledge(through: hello.received)
        participant.acknowledged = participant.received
        participant.unacknowledgedBytes = 0
        sessions[hello.sessionID]?.participants[id] = participant
        connections[connection]?.phase = .joined(session: hello.sessionID, participant: id)
        let welcome = RelayWelcomeFrame(
            sessionID: hello.sessionID, created: false, resumed: true, received: participant.received,
            token: participant.token.bytes, activity: [], participants: [], attachmentCount: 0)
        directives.append(.send(connection, .welcome(welcome)))
        for frame in participant.outbox.pending { directives.append(.send(connection, frame)) }
        directives.append(probe(connection, at: now))
        guard wasAway, let others = sessions[hello.sessionID]?.order.filter({ $0 != id }) else { return directives }
        return directives + broadcast(in: hello.sessionID, to: others, at: now) { .participantAway(sequence: $0, id: id, away: false) }
    }
}
