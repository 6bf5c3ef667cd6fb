import Foundation
import TandemNet

extension GroupSession: MessengerSession {
    /// Carries out what the relay reports.
    func handle(_ event: RelayEvent, link: any RelayLink) {
        switch event {
        case .participantJoined(let record):
            guard record.isSelfCertified else {
                reject(Rejection(reason: .forgedIdentity, sender: record.id, path: "participant"))
                return
            }
            let participant = Participant(id: record.id, displayName: record.displayName)
            let joined = core.withLock { core in
                core.known[record.id] = participant
                return core.active.contains(localParticipant.id)
            }
            // Tell the newcomer that this participant is in the activity.
            if joined {
                try? link.send(presence(to: .only([record.id])), to: .only([record.id]), reliable: true)
            }
        case .participantLeft(let id):
            let active = core.withLock { core in
                core.active.remove(id)
                core.known.removeValue(forKey: id)
                return activeSetLocked(core)
            }
            publishActive(active)
            announceDeparture(id)
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
        case .connectionInterrupted, .connectionResumed:
            // Ordered broadcasts are the playback coordinator's; the messenger does not use them.
            break
        case .failed(let error):
            invalidate(GroupSessionError.from(error))
        }
    }

    /// This participant's signed presence for `recipients`.
    func presence(to recipients: Recipients) -> [UInt8] {
        bodies.seal(SessionEnvelope.presence(name: localParticipant.displayName).encoded, kind: .presence, path: .reliable, to: recipients)
    }

    private func receive(_ body: [UInt8], from sender: UUID, reliable: Bool) {
        // Only what this session's participants signed, for this participant, on this path,
        // once, and attributed to its signer, is delivered; the rest is counted and reported.
        let expectation = BodySealer.Expectation(
            path: reliable ? .reliable : .unreliable, kinds: reliable ? [.message, .presence] : [.message],
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
            let active = core.withLock { core in
                // The signed name is the participant's own word; the relay's is replaced by it.
                core.known[signed.sender] = Participant(id: signed.sender, displayName: name)
                core.active.insert(signed.sender)
                return activeSetLocked(core)
            }
            publishActive(active)
        case (.message, .message(let type, let payload)?):
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

    private func publishActive(_ active: Set<Participant>) {
        guard core.withLock({ !$0.invalidated }) else { return }
        $activeParticipants.storage.value = active
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
}
