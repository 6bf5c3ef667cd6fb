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
/// from the sequence after the last one delivered, so nothing is skipped or repeated.
public final class JetStreamOrderedConsumer: AsyncSequence, Sendable {
    /// Each element is one stored message.
    public typealias Element = JetStreamStoredMessage
    /// The sequence's failure.
    public typealias Failure = JetStreamError

    private let messages: AsyncThrowingStream<JetStreamStoredMessage, any Error>
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(jetStream: JetStream, stream: String, subject: String, from sequence: UInt64, heartbeat: Duration, bufferLimit: Int) {
        let (messages, continuation) = AsyncThrowingStream.makeStream(of: JetStreamStoredMessage.self, throwing: (any Error).self,
                                                                       bufferingPolicy: .bufferingOldest(bufferLimit))
        self.messages = messages
        let driver = Task {
            await JetStreamOrderedConsumer.run(jetStream, stream: stream, subject: subject, from: sequence, heartbeat: heartbeat, into: continuation)
        }
        task.withLock { $0 = driver }
        continuation.onTermination = { _ in driver.cancel() }
    }

    deinit { stop() }

    /// Stops following: the consumer goes, and the sequence finishes.
    public func stop() {
        task.withLock { $0?.cancel() }
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
    static func createConsumer(_ jetStream: JetStream, stream: String, subject: String, inbox: String, from sequence: UInt64,
                               heartbeat: Duration) async throws -> String {
        let nanoseconds = heartbeat.components.seconds * 1_000_000_000 + heartbeat.components.attoseconds / 1_000_000_000
        let config: [String: Any] = [
            "deliver_subject": inbox, "deliver_policy": "by_start_sequence", "opt_start_seq": sequence,
            "ack_policy": "none", "replay_policy": "instant", "filter_subject": subject, "flow_control": true,
            "idle_heartbeat": nanoseconds, "mem_storage": true, "num_replicas": 1, "inactive_threshold": 5 * nanoseconds,
        ]
        let body = try JSONSerialization.data(withJSONObject: ["stream_name": stream, "config": config], options: [.sortedKeys])
        return try await jetStream.call("CONSUMER.CREATE.\(JetStream.checkName(stream))", body: Array(body), as: ConsumerCreated.self).name
    }

    private static func run(_ jetStream: JetStream, stream: String, subject: String, from start: UInt64, heartbeat: Duration,
                            into continuation: AsyncThrowingStream<JetStreamStoredMessage, any Error>.Continuation) async {
        let connection = jetStream.connection
        var next = Swift.max(start, 1)
        var pause = Duration.zero
        while !Task.isCancelled {
            if pause > .zero { try? await Task.sleep(for: pause) }
            pause = .milliseconds(250)
            if connection.isClosed {
                return continuation.finish(throwing: JetStreamError(.connection, reason: "the NATS connection is closed"))
            }
            let inbox = "_INBOX.\(UInt64.random(in: 0...UInt64.max)).\(UInt64.random(in: 0...UInt64.max))"
            guard let subscription = try? await connection.subscribe(to: inbox) else { continue }
            let name: String
            do {
                name = try await createConsumer(jetStream, stream: stream, subject: subject, inbox: inbox, from: next, heartbeat: heartbeat)
            } catch let error as JetStreamError where error.kind == .streamNotFound {
                await subscription.unsubscribe()
                return continuation.finish(throwing: error)
            } catch {
                await subscription.unsubscribe()
                continue
            }
            let lastActivity = Activity()
            let silence = Int64(heartbeat.components.seconds * 3_000_000_000 + heartbeat.components.attoseconds / 333_333_333)
            // Heartbeats that stop mean the consumer is gone with its server: start again.
            let watchdog = Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: heartbeat)
                    if Int64(DispatchTime.now().uptimeNanoseconds) - lastActivity.instant.load(ordering: .relaxed) > silence {
                        await subscription.unsubscribe()
                        return
                    }
                }
            }
            var consumerSequence: UInt64 = 0
            do {
                delivering: for try await message in subscription {
                    lastActivity.instant.store(Int64(DispatchTime.now().uptimeNanoseconds), ordering: .relaxed)
                    if Task.isCancelled { break }
                    if message.status == 100 {
                        if let reply = message.replyTo { try? await connection.publish(reply, payload: []) }
                        if let last = message.headers?["Nats-Last-Consumer"].flatMap(UInt64.init), last > consumerSequence { break delivering }
                        continue
                    }
                    guard let delivery = Delivery(replyTo: message.replyTo) else { continue }
                    guard delivery.consumerSequence == consumerSequence + 1 else { break delivering }
                    let stored = JetStreamStoredMessage(subject: message.subject, sequence: delivery.streamSequence, headers: message.headers, payload: message.payload)
                    if case .dropped = continuation.yield(stored) { break delivering }
                    consumerSequence = delivery.consumerSequence
                    next = delivery.streamSequence + 1
                    pause = .zero
                }
            } catch {
                // The connection closed: the loop's next pass says so.
            }
            watchdog.cancel()
            await subscription.unsubscribe()
            _ = try? await jetStream.call("CONSUMER.DELETE.\(JetStream.checkName(stream)).\(JetStream.checkName(name))", body: [], as: Ignored.self)
        }
        continuation.finish()
    }

    private struct Ignored: Decodable {}

    /// When the consumer was last heard from (monotonic ns), shared with its watchdog.
    private final class Activity: Sendable {
        let instant = Atomic<Int64>(Int64(DispatchTime.now().uptimeNanoseconds))
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
