import Synchronization

/// The messages of one subscription, as an async sequence: iterate it to receive them in the
/// order the server sent them, until `unsubscribe()` or the connection closes (the loop then
/// ends, or throws the connection's final error).
///
/// A reader slower than the server fills a buffer of `NATSConfiguration.subscriptionBufferLimit`
/// messages; beyond it new messages are dropped and counted in `droppedCount`, so that one slow
/// reader cannot grow the client's memory without end. Dropping the sequence unsubscribes.
public struct NATSSubscription: AsyncSequence, Sendable {
    /// Each element is one message.
    public typealias Element = NATSMessage
    /// The sequence's failure: the connection's final error.
    public typealias Failure = NATSError

    /// The subscription's sid on its connection.
    public let sid: UInt64
    /// The subject (with any wildcards) subscribed to.
    public let subject: String
    private let stream: AsyncThrowingStream<NATSMessage, any Error>
    private let state: State
    private weak var connection: NATSConnection?

    final class State: Sendable {
        let dropped = Atomic<Int>(0)
    }

    init(sid: UInt64, subject: String, stream: AsyncThrowingStream<NATSMessage, any Error>, state: State, connection: NATSConnection) {
        self.sid = sid
        self.subject = subject
        self.stream = stream
        self.state = state
        self.connection = connection
    }

    /// How many messages arrived while the buffer was full, and were dropped.
    public var droppedCount: Int { state.dropped.load(ordering: .relaxed) }

    /// Ends the subscription: the server stops sending, and the sequence finishes after what it holds.
    public func unsubscribe() async {
        await connection?.unsubscribe(sid)
    }

    /// An iterator over the messages.
    public func makeAsyncIterator() -> Iterator {
        Iterator(base: stream.makeAsyncIterator())
    }

    /// Iterates the messages of a subscription.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<NATSMessage, any Error>.AsyncIterator

        /// The next message, nil once the subscription ended; throws the connection's final error.
        public mutating func next() async throws(NATSError) -> NATSMessage? {
            do {
                return try await base.next()
            } catch let error as NATSError {
                throw error
            } catch {
                throw NATSError(.connectionLost, reason: "\(error)")
            }
        }

        /// The next message on the caller's isolation.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(NATSError) -> NATSMessage? {
            do {
                return try await base.next(isolation: actor)
            } catch let error as NATSError {
                throw error
            } catch {
                throw NATSError(.connectionLost, reason: "\(error)")
            }
        }
    }
}
