import Foundation
import TandemNet

/// Sends and receives a session's messages: any `Codable` value up to 256 KiB, reliably (in
/// order, without loss) or unreliably (at most once, for frequent updates that the next one
/// supersedes), as SharePlay's `GroupSessionMessenger`.
///
/// Code on the main actor can send and receive plain `Codable` values that are not `Sendable`:
/// `send` runs on the caller's actor, and each value `messages(of:)` yields is freshly decoded.
public final class GroupSessionMessenger: Sendable {
    /// How messages travel.
    public enum DeliveryMode: Sendable, Equatable {
        /// In order per sender, nothing lost or duplicated while connected (TCP through the relay).
        case reliable
        /// At most once, may be lost, never held up by reliable traffic (UDP through the relay).
        case unreliable
    }

    /// Who a message goes to.
    public enum Participants: Sendable, Hashable {
        /// Everyone else in the session.
        case all
        /// One participant.
        case only(Participant)
        /// Some participants.
        case set(Set<Participant>)

        /// Several participants (the spelling SharePlay uses).
        public static func only(_ participants: Set<Participant>) -> Participants { .set(participants) }
    }

    /// Where a received message came from.
    public struct MessageContext: Sendable {
        /// The participant who sent it.
        public let source: Participant
    }

    /// The largest message, encoded.
    public static let maximumMessageSize = 256 * 1024

    /// How this messenger's messages travel.
    public let deliveryMode: DeliveryMode
    private let session: any MessengerSession

    /// A reliable messenger for `session`.
    public convenience init<Activity: GroupActivity>(session: GroupSession<Activity>) {
        self.init(session: session, deliveryMode: .reliable)
    }

    /// A messenger for `session` with the given delivery mode.
    public init<Activity: GroupActivity>(session: GroupSession<Activity>, deliveryMode: DeliveryMode) {
        self.session = session
        self.deliveryMode = deliveryMode
    }

    /// Sends `value` to `participants`. Throws before anything is sent when it is larger than
    /// 256 KiB encoded or the session is not joined.
    nonisolated(nonsending)
    public func send<Message: Encodable>(_ value: Message, to participants: Participants = .all) async throws {
        try sendNow(value, to: participants)
    }

    /// Encodes `value` and queues it for `participants`; returns at once.
    private func sendNow<Message: Encodable>(_ value: Message, to participants: Participants) throws {
        let payload: Data
        do {
            payload = try JSONEncoder().encode(value)
        } catch {
            throw GroupSessionError(.encoding, "cannot encode \(Message.self): \(error)")
        }
        guard payload.count <= GroupSessionMessenger.maximumMessageSize else {
            throw GroupSessionError(.tooLarge, "a \(Message.self) message of \(payload.count) bytes is over the limit of \(GroupSessionMessenger.maximumMessageSize) bytes")
        }
        let recipients: Recipients = switch participants {
        case .all: .everyone
        case .only(let one): .only([one.id])
        case .set(let some): .only(Set(some.map(\.id)))
        }
        try session.send(.message(type: messageRoute(of: Message.self), payload: Array(payload)),
                         to: recipients, reliable: deliveryMode == .reliable)
    }

    /// Sends `value` to `participants`, then calls `completion` with the error, or nil once
    /// it is sent (SharePlay's completion-handler form).
    public func send<Message: Encodable & Sendable>(_ value: Message, to participants: Participants = .all,
                                                    completion: @escaping @Sendable ((any Error)?) -> Void) {
        // Queued at once, in the caller's order (sending never waits); the completion is called
        // on the session's loop, after this returns, as SharePlay calls it from its queue.
        let failure: (any Error)?
        do {
            try sendNow(value, to: participants)
            failure = nil
        } catch {
            failure = error
        }
        session.execute { completion(failure) }
    }

    /// The messages of type `Message` that arrive from now on, each with its sender; the
    /// sequence ends when the session is invalidated.
    ///
    /// Messages are routed by `Message.messageIdentifier` when the type is
    /// `CustomMessageIdentifiable`, and otherwise by its fully qualified name
    /// (`String(reflecting:)`, as `MyApp.Answer`): two programs share a message type through a
    /// common module, or through the same identifier. It asks nothing more of `Message` than
    /// `Decodable`, so generic code (`func messages<T: Codable>(of type: T.Type)`) calls it as is.
    public func messages<Message: Decodable>(of type: Message.Type) -> Messages<Message> {
        Messages(base: session.subscribe(type: messageRoute(of: type)))
    }

    /// An async sequence of received messages of one type.
    ///
    /// Each value is decoded on whichever actor reads, freshly, and handed over as `sending`.
    /// The sequence itself is `Sendable` whatever `Message` is (it holds the subscription, no
    /// value), so that it can be made where the subscription must start and read in a task.
    public struct Messages<Message: Decodable>: AsyncSequence, Sendable {
        /// A message and where it came from.
        public typealias Element = (Message, MessageContext)
        /// Receiving never fails: a message that does not decode is skipped.
        public typealias Failure = Never

        let base: AsyncStream<InboundMessage>

        /// Iterates the messages.
        public func makeAsyncIterator() -> Iterator { Iterator(base: base.makeAsyncIterator()) }

        /// Decodes each message as it is taken, so that the value belongs to the caller alone.
        public struct Iterator: AsyncIteratorProtocol {
            var base: AsyncStream<InboundMessage>.Iterator

            /// The next message, or nil once the session is over.
            public mutating func next() async -> sending Element? {
                await next(isolation: #isolation)
            }

            /// The next message, on the caller's actor.
            public mutating func next(isolation actor: isolated (any Actor)?) async -> sending Element? {
                while let inbound = await base.next(isolation: actor) {
                    if let element = Iterator.decode(inbound) { return element }
                }
                return nil
            }

            /// A fresh value from `inbound`'s JSON, reachable from nothing else: safe to hand over.
            private static func decode(_ inbound: InboundMessage) -> sending Element? {
                guard let message = decodeFresh(Message.self, from: inbound.payload) else { return nil }
                return (message, MessageContext(source: inbound.source))
            }
        }
    }
}

/// A received message before decoding: its JSON and its sender. Each reader decodes a value of
/// its own from it.
struct InboundMessage: Sendable {
    let payload: [UInt8]
    let source: Participant
}

/// What a messenger needs of its session, whatever the activity type.
protocol MessengerSession: Sendable {
    func send(_ envelope: SessionEnvelope, to recipients: Recipients, reliable: Bool) throws(GroupSessionError)
    func subscribe(type: String) -> AsyncStream<InboundMessage>
    /// Runs `body` on the session's loop, after what is queued there.
    func execute(_ body: @escaping @Sendable () -> Void)
}

/// Decodes a value that nothing else can reach: its decoder is made and dropped here.
private func decodeFresh<Value: Decodable>(_ type: Value.Type, from bytes: [UInt8]) -> sending Value? {
    // Made here from bytes, reachable from nothing else: handing it over is safe, though the
    // checker ties it to `Value`'s metatype (which need not be `SendableMetatype`).
    nonisolated(unsafe) let value = try? JSONDecoder().decode(Value.self, from: Data(bytes))
    return value
}

/// A message type that names its own route, as SharePlay's `CustomMessageIdentifiable`: a
/// stable string, unique among the program's message types, that both ends use whatever the
/// type is called or whichever module declares it.
public protocol CustomMessageIdentifiable {
    /// The identifier the messenger routes this type's messages by.
    static var messageIdentifier: String { get }
}

/// The route of `type`'s messages: its `messageIdentifier`, or its fully qualified name.
func messageRoute<Message>(of type: Message.Type) -> String {
    if let identified = type as? any CustomMessageIdentifiable.Type { return identified.messageIdentifier }
    return String(reflecting: type)
}
