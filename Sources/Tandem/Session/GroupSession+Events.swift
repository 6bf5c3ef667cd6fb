import Foundation
import TandemNet

extension GroupSession: MessengerSession {
    /// This participant's signed presence for `recipients`.
    func presence(to recipients: Recipients) -> [UInt8] {
        bodies.seal(SessionEnvelope.presence(name: localParticipant.displayName).encoded, kind: .presence, path: .reliable, to: recipients)
    }

    /// The link, when this participant may send: joined and not invalidated. Any thread.
    var sendingLink: (any RelayLink)? {
        view.withLock { $0.isJoined && !$0.isInvalidated ? $0.link : nil }
    }

    /// Sends a sealed envelope; throws when the session is not joined or the body is too large.
    func send(_ envelope: SessionEnvelope, to recipients: Recipients, reliable: Bool) throws(GroupSessionError) {
        guard let link = sendingLink else {
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

    /// Runs `body` on the participant's loop, after what is queued there.
    func execute(_ body: @escaping @Sendable () -> Void) {
        loop.execute(body)
    }

    /// A new reader of messages of the type named `type`.
    func subscribe(type: String) -> AsyncStream<InboundMessage> {
        let (stream, continuation) = AsyncStream.makeStream(of: InboundMessage.self, bufferingPolicy: .unbounded)
        let id = readerID()
        addReader({ [self] in readers.messages[id] = MessageSubscriber(type: type, continuation: continuation) },
                  else: { continuation.finish() })
        continuation.onTermination = { [weak self] _ in
            self?.onLoop { [weak self] in _ = self?.readers.messages.removeValue(forKey: id) }
        }
        return stream
    }

    /// The relay link, once joined.
    var joinedLink: (any RelayLink)? {
        view.withLock { $0.isInvalidated ? nil : $0.link }
    }

    /// The participant with identity `id`, if known.
    func participant(_ id: UUID) -> Participant? {
        view.withLock { $0.known[id] }
    }

    /// The participant with identity `id`: one in the session now, or one who has left but
    /// signed something this participant received (a late joiner learns them from the relay's
    /// kept presences); nil if never heard of.
    public func participant(identifiedBy id: UUID) -> Participant? {
        if id == localParticipant.id { return localParticipant }
        return view.withLock { $0.known[id] ?? $0.former[id] }
    }
}
