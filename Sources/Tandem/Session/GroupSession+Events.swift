import Foundation
import TandemNet

extension GroupSession: MessengerSession {
    /// Carries out what the relay reports.
    func handle(_ event: RelayEvent, link: any RelayLink) {
        switch event {
        case .participantJoined(let record):
            guard let (participant, _) = verified(record) else { return }
            let joined = core.withLock { core in
                core.known[record.id] = participant
                return core.active.contains(localParticipant.id)
            }
            // Tell the newcomer that this participant is in the activity.
            if joined {
                try? link.send(presence(to: .only([record.id])), to: .only([record.id]), reliable: true)
            }
        case .participantLeft(let id):
            let wasAway = core.withLock { core in
                core.active.remove(id)
                let wasAway = core.away.remove(id) != nil
                if let gone = core.known.removeValue(forKey: id) { core.former[id] = gone }
                return wasAway
            }
            if wasAway { publishAway() }
            publishActive()
            announceDeparture(id)
            endIfInitiatorLeft(id)
        case .participantAway(let id, let away):
            let changed = core.withLock { core in
                away ? core.away.insert(id).inserted : core.away.remove(id) != nil
            }
            if changed { publishAway() }
        case .ordered(let delivery):
            receiveOrdered(delivery)
        case .message(let from, let body, let reliable):
            receive(body, from: from, reliable: reliable)
        case .attachmentAdded(let record):
            attachmentAdded(record)
        case .attachmentRemoved(let id):
            attachmentRemoved(id)
        case .ended(let by, let reason):
            let name = core.withLock { $0.known[by]?.displayName } ?? "someone"
            invalidate(GroupSessionError(.ended, reason.isEmpty ? "\(name) ended the session" : reason))
        case .connectionQuiet, .connectionInterrupted:
            // Nothing can be ordered until the relay answers again: people are told at once.
            guard !core.withLock({ $0.invalidated }) else { return }
            if $relayAvailability.storage.value == .available {
                $relayAvailability.storage.value = .unavailable(reason: RelayAvailability.reconnecting)
            }
        case .connectionResumed:
            // Perhaps on another relay of the invite's: the session clock follows the link there.
            followClock(to: link)
            if $relayAvailability.storage.value == .unavailable(reason: RelayAvailability.reconnecting) {
                $relayAvailability.storage.value = .available
            }
        case .relayAvailability(let available, let reason):
            guard !core.withLock({ $0.invalidated }) else { return }
            $relayAvailability.storage.value = available ? .available : .unavailable(reason: reason)
        case .failed(let error):
            invalidate(GroupSessionError.from(error))
        }
    }

    /// Ends the session here when `id`, who left, started it and the activity ends when its
    /// initiator leaves (`GroupActivityMetadata.lifetimePolicy`): the initiator's own `leave()`
    /// ends it for everyone, and this covers an initiator that went without leaving.
    private func endIfInitiatorLeft(_ id: UUID) {
        let (ends, name) = core.withLock { core in
            (core.initiator == id && core.lifetimePolicy == .endsWhenInitiatorLeaves, core.former[id]?.displayName ?? "the initiator")
        }
        guard ends else { return }
        invalidate(GroupSessionError(.ended, "\(name), who started it, left: the activity ends with them"))
    }

    /// The participant `record` names, with the name its signed presence gives (the relay's
    /// when it gave none), and whether it has left; nil (and a rejection) when its identity is
    /// not its key's. A presence that does not verify is rejected and its name not believed.
    func verified(_ record: ParticipantRecord) -> (Participant, departed: Bool)? {
        guard record.isSelfCertified else {
            reject(Rejection(reason: .forgedIdentity, sender: record.id, path: "participant"))
            return nil
        }
        var name = record.displayName
        if !record.presence.isEmpty {
            let expectation = BodySealer.Expectation(path: .journal, kinds: [.presence], sender: record.id, attachment: nil,
                                                     checksReplay: false)
            switch bodies.open(record.presence, expecting: expectation) {
            case .success(let body):
                if case .presence(let signed)? = SessionEnvelope(decoding: body.payload) { name = signed }
            case .failure(let reason):
                reject(Rejection(reason: reason, sender: record.id, path: "presence"))
                // Not believed: the participant goes by its identity, not by the relay's word.
                name = ""
            }
        }
        return (Participant(id: record.id, displayName: name), record.departed)
    }

    /// This participant's signed presence for `recipients`.
    func presence(to recipients: Recipients) -> [UInt8] {
        bodies.seal(SessionEnvelope.presence(name: localParticipant.displayName).encoded, kind: .presence, path: .reliable, to: recipients)
    }

    private func receive(_ body: [UInt8], from sender: UUID, reliable: Bool) {
        // Only what this session's participants signed, for this participant, on this path,
        // once, and attributed to its signer, is delivered; the rest is counted and reported.
        let expectation = BodySealer.Expectation(
            path: reliable ? .reliable : .unreliable, kinds: reliable ? [.message, .presence, .mediaStream] : [.message],
            sender: sender, attachment: nil, checksReplay: true)
        let signed: SignedBody
        switch bodies.open(body, expecting: expectation) {
        case .success(let opened): signed = opened
        case .failure(let reason):
            reject(Rejection(reason: reason, sender: sender, path: "message"))
            return
        }
        switch (signed.kind, SessionEnvelope(decoding: signed.payload)) {
        case (.presence, .presence(let name)?):
            core.withLock { core in
                // The signed name is the participant's own word; the relay's is replaced by it.
                core.known[signed.sender] = Participant(id: signed.sender, displayName: name)
                core.active.insert(signed.sender)
                return ()
            }
            publishActive()
        case (.mediaStream, _):
            deliverStreamBody(signed)
        case (.message, .message(let type, let payload)?) where type != streamRoute:
            let (source, subscribers) = core.withLock { core in
                (core.known[signed.sender], core.subscribers.values.filter { $0.type == type })
            }
            guard let source else { return }
            for subscriber in subscribers {
                subscriber.continuation.yield(InboundMessage(payload: payload, source: source))
            }
        default:
            reject(Rejection(reason: .wrongKind, sender: signed.sender, path: "message"))
        }
    }

    /// Publishes who is away: those reported away that are known, not this participant.
    private func publishAway() {
        let away = core.withLock { core -> Set<Participant>? in
            core.invalidated ? nil : Set(core.away.compactMap { core.known[$0] })
        }
        guard let away else { return }
        $awayParticipants.storage.value = away
    }

    /// Publishes who is active as the core holds it now, computed and published under the core's
    /// lock: the join and the link's events both publish, and a set computed before the other's
    /// change but published after it stayed published for good (a wait for the last joiner
    /// timed out on it). The storage's lock is taken inside the core's, never the
    /// other way round (a subscriber's yield calls back into nothing).
    func publishActive() {
        core.withLock { core in
            guard !core.invalidated else { return }
            $activeParticipants.storage.value = activeSetLocked(core)
        }
    }

    /// Sends a sealed envelope; throws when the session is not joined or the body is too large.
    func send(_ envelope: SessionEnvelope, to recipients: Recipients, reliable: Bool) throws(GroupSessionError) {
        guard let link = core.withLock({ $0.invalidated || !$0.active.contains(localParticipant.id) ? nil : $0.link }) else {
            throw GroupSessionError(.notJoined, "the session is not joined: call join() and wait for .joined")
        }
        let kind: BodyKind = if case .presence = envelope { .presence } else { .message }
        do {
            try link.send(bodies.seal(envelope.encoded, kind: kind, path: reliable ? .reliable : .unreliable, to: recipients),
                          to: recipients, reliable: reliable)
        } catch {
            throw GroupSessionError.from(error)
        }
    }

    /// A new reader of messages of the type named `type`.
    func subscribe(type: String) -> AsyncStream<InboundMessage> {
        let (stream, continuation) = AsyncStream.makeStream(of: InboundMessage.self, bufferingPolicy: .unbounded)
        let id = core.withLock { core -> Int? in
            guard !core.invalidated else { return nil }
            let id = core.nextSubscriber
            core.nextSubscriber += 1
            core.subscribers[id] = MessageSubscriber(type: type, continuation: continuation)
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.core.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// The relay link, once joined.
    var joinedLink: (any RelayLink)? {
        core.withLock { $0.invalidated ? nil : $0.link }
    }

    /// The participant with identity `id`, if known.
    func participant(_ id: UUID) -> Participant? {
        core.withLock { $0.known[id] }
    }

    /// The participant with identity `id`: one in the session now, or one who has left but
    /// signed something this participant received (a late joiner learns them from the relay's
    /// kept presences); nil if never heard of.
    public func participant(identifiedBy id: UUID) -> Participant? {
        if id == localParticipant.id { return localParticipant }
        return core.withLock { $0.known[id] ?? $0.former[id] }
    }
}
