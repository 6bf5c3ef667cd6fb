import Foundation
import Synchronization

/// A subject of a stream read in order from a sequence onwards, then followed live: what a relay
/// needs to replay a session's history and keep up with it. An async sequence of stored
/// messages, each once and in stream order, until `stop()`.
///
/// Built as the NATS clients build their ordered consumers: an ephemeral push consumer without
/// acknowledgements (`ack_policy` none, flow control, idle heartbeats) delivering to an inbox of
/// its own. Each delivery's reply subject (`$JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.
/// <consumer seq>…`) carries its sequences; a gap in the consumer sequence, heartbeats that stop
/// (the consumer's server died) or a reader too slow for the buffer make it start a new consumer
/// from the sequence after the last one delivered, so nothing is skipped or repeated. Those rules
/// are `JetStreamLoopConsumer`'s: this sequence is that consumer with a buffer for an async reader.
public final class JetStreamOrderedConsumer: AsyncSequence, Sendable {
    /// Each element is one stored message.
    public typealias Element = JetStreamStoredMessage
    /// The sequence's failure.
    public typealias Failure = JetStreamError

    private let messages: AsyncThrowingStream<JetStreamStoredMessage, any Error>
    private let continuation: AsyncThrowingStream<JetStreamStoredMessage, any Error>.Continuation
    private let follower: Follower

    /// The loop consumer this sequence reads, once made: its `deliver` refers to it, to start it
    /// again when the buffer is full; `stop()` lets go of it (the reference is a cycle until then).
    private final class Follower: Sendable {
        let consumer = Mutex<JetStreamLoopConsumer?>(nil)
    }

    init(jetStream: JetStream, stream: String, subject: String, from sequence: UInt64, heartbeat: Duration, bufferLimit: Int) {
        let (messages, continuation) = AsyncThrowingStream.makeStream(of: JetStreamStoredMessage.self, throwing: (any Error).self,
                                                                       bufferingPolicy: .bufferingOldest(bufferLimit))
        self.messages = messages
        self.continuation = continuation
        let follower = Follower()
        self.follower = follower
        // The rules are the loop consumer's; this only buffers for an async reader. A reader too
        // slow for the buffer starts a new consumer from the message it could not take.
        let consumer = JetStreamLoopConsumer(
            jetStream: jetStream, stream: stream, subject: subject, from: sequence, heartbeat: heartbeat,
            deliver: { stored in
                if case .dropped = continuation.yield(stored) { follower.consumer.withLock { $0 }?.restart(from: stored.sequence) }
            },
            ended: { error in continuation.finish(throwing: error) })
        follower.consumer.withLock { $0 = consumer }
        continuation.onTermination = { _ in follower.consumer.withLock { $0 }?.stop() }
        consumer.start()
    }

    deinit { stop() }

    /// Stops following: the consumer goes, and the sequence finishes.
    public func stop() {
        let consumer = follower.consumer.withLock { consumer in
            defer { consumer = nil }
            return consumer
        }
        consumer?.stop()
        continuation.finish()
    }

    /// An iterator over the messages.
    public func makeAsyncIterator() -> Iterator { Iterator(base: messages.makeAsyncIterator()) }

    /// Iterates the messages in stream order.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<JetStreamStoredMessage, any Error>.AsyncIterator

        /// The next message; nil once stopped; throws `streamNotFound` or the connection's end.
        public mutating func next() async throws(JetStreamError) -> JetStreamStoredMessage? {
            do {
                return try await base.next()
            } catch let error as JetStreamError {
                throw error
            } catch {
                throw JetStreamError(.connection, reason: "\(error)")
            }
        }
    }

    /// The sequences a delivery's reply subject carries.
    struct Delivery: Equatable {
        var streamSequence: UInt64
        var consumerSequence: UInt64

        /// Parses `$JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts>.<pending>` (9 tokens)
        /// or the form with domain and account hash (12 or more).
        init?(replyTo: String?) {
            guard let tokens = replyTo?.split(separator: ".", omittingEmptySubsequences: false),
                  tokens.count >= 9, tokens[0] == "$JS", tokens[1] == "ACK" else { return nil }
            let base = tokens.count == 9 ? 5 : 7
            guard tokens.count > base + 1, let stream = UInt64(tokens[base]), let consumer = UInt64(tokens[base + 1]) else { return nil }
            streamSequence = stream
            consumerSequence = consumer
        }
    }

    private struct ConsumerCreated: Decodable { var name: String }

    /// Creates the ephemeral push consumer an ordered consumer reads (no acknowledgements, flow
    /// control, idle heartbeats every `heartbeat`, gone after five of them unread) delivering
    /// `subject` of `stream` from `sequence` to `inbox`; its name.
    ///
    /// Unanswered within a heartbeat (at least 1 s), the request times out, so that a create
    /// sent while the stream or the cluster elects a leader is tried again soon rather than after
    /// the JetStream API's own timeout (docs/SCALING.md, after the failover figures). A create
    /// that timed out but was made leaves a consumer with no interest, which the server removes
    /// after `inactive_threshold`.
    static func createConsumer(_ jetStream: JetStream, stream: String, subject: String, inbox: String, from sequence: UInt64,
                               heartbeat: Duration) async throws -> String {
        let nanoseconds = NATSConnection.nanoseconds(heartbeat)
        let config: [String: Any] = [
            "deliver_subject": inbox, "deliver_policy": "by_start_sequence", "opt_start_seq": sequence,
            "ack_policy": "none", "replay_policy": "instant", "filter_subject": subject, "flow_control": true,
            "idle_heartbeat": nanoseconds, "mem_storage": true, "num_replicas": 1, "inactive_threshold": 5 * nanoseconds,
        ]
        let body = try JSONSerialization.data(withJSONObject: ["stream_name": stream, "config": config], options: [.sortedKeys])
        return try await jetStream.call("CONSUMER.CREATE.\(JetStream.checkName(stream))", body: Array(body), as: ConsumerCreated.self,
                                        timeout: Swift.max(heartbeat, .seconds(1))).name
    }

}

extension JetStream {
    /// Reads `subject` of `stream` in order from `sequence` onwards and follows it live; see
    /// `JetStreamOrderedConsumer`. `heartbeat` is how often an idle consumer says it is alive
    /// (silence for three of them starts a new one); at most `bufferLimit` messages wait for
    /// a slow reader before the consumer starts again from where the reader is.
    public func orderedConsumer(stream: String, subject: String, from sequence: UInt64 = 1, heartbeat: Duration = .seconds(1),
                                bufferLimit: Int = 10_000) -> JetStreamOrderedConsumer {
        JetStreamOrderedConsumer(jetStream: self, stream: stream, subject: subject, from: sequence, heartbeat: heartbeat, bufferLimit: bufferLimit)
    }
}
