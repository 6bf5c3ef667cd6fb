import Foundation
import TandemNet

extension GroupSession: MessengerSession {
    /// Carries out what the relay reports.
    func handle(_ event: RelayEvent, link: any RelayLink) {
        switch event {
        case .participantJoined(let record):
            let participant = Participant(id: record.id, displayName: record.displayName)
            let joined = core.withLock { core in
                core.known[record.id] = participant
                return core.active.contains(localParticipant.id)
            }
            // Tell the newcomer that this participant is in the activity.
            if joined {
                try? link.send(sealer.seal(SessionEnvelope.presence(name: localParticipant.displayName).encoded),
                               to: .only([record.id]), reliable: true)
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
        case .message(let from, let body, _):
            receive(body, from: from)
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

    private func receive(_ body: [UInt8], from sender: UUID) {
        // Bodies that do not open with this session's key are not from a participant: drop them.
        guard let plaintext = sealer.open(body), let envelope = SessionEnvelope(decoding: plaintext) else { return }
        switch envelope {
        case .presence(let name):
            let active = core.withLock { core in
                if core.known[sender] == nil { core.known[sender] = Participant(id: sender, displayName: name) }
                core.active.insert(sender)
                return activeSetLocked(core)
            }
            publishActive(active)
        case .message(let type, let payload):
            let (source, subscribers) = core.withLock { core in
                (core.known[sender], core.subscribers.values.filter { $0.type == type })
            }
            guard let source else { return }
            for subscriber in subscribers {
                subscriber.continuation.yield(InboundMessage(payload: payload, source: source))
            }
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
        do {
            try link.send(sealer.seal(envelope.encoded), to: recipients, reliable: reliable)
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
