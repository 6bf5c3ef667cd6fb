import Foundation
import TandemIdentity

/// The pure core of a holder's serving: which requests it takes, in what order it answers them,
/// and how fast. No I/O and no clock of its own (instants are nanoseconds of an injected clock).
///
/// - A request is for a range of an item it holds, within the item, of at most
///   `maximumRequestLength` bytes; anything else is refused (`badRange`, `notHeld`).
/// - Each asker has a queue of at most `maximumQueuedPerAsker` requests (`busy` beyond it), and
///   at most `maximumAskers` askers are served at once, so that a crowd cannot make it read
///   without bound.
/// - Replies go out in chunks of `chunkSize` (well under the relay's frame limit), one chunk per
///   asker in turn (round robin: one joiner's seek does not wait behind another's read-ahead),
///   within a byte rate (`bytesPerSecond`, a token bucket of `burstBytes`), so that serving
///   several joiners leaves the holder's own playback its disk and CPU, and the relay's queues
///   (`RelayCoreConfiguration.maximumOutboxBytes`, the link's send queue) far from full.
public struct StreamServerCore: Sendable {
    /// Limits.
    public struct Configuration: Sendable, Hashable {
        /// The most bytes one request may ask for.
        public var maximumRequestLength = 1024 * 1024
        /// The bytes of one reply chunk (one sealed body).
        public var chunkSize = 64 * 1024
        /// How many of one asker's requests may wait.
        public var maximumQueuedPerAsker = 16
        /// How many askers are served at once.
        public var maximumAskers = 32
        /// The byte rate over all askers (32 MiB/s, about 268 Mbit/s).
        public var bytesPerSecond: Double = 32 * 1024 * 1024
        /// The largest burst, in bytes.
        public var burstBytes: Double = 4 * 1024 * 1024

        /// The defaults.
        public init() {}
    }

    /// One chunk to read from the held copy and send.
    public struct Chunk: Sendable, Equatable {
        /// Who asked.
        public var asker: UUID
        /// Their request's id.
        public var request: UInt64
        /// The item's content identity.
        public var identity: String
        /// Where the chunk starts.
        public var offset: Int64
        /// How many bytes.
        public var length: Int
    }

    /// What `onRequest` asks of the shell.
    public enum RequestDirective: Sendable, Equatable {
        /// Send this refusal to the asker.
        case refuse(StreamMessage, to: UUID)
        /// Work is queued: call `nextChunks` now.
        case serve
    }

    /// What `nextChunks` asks of the shell.
    public enum ServeDirective: Sendable, Equatable {
        /// Read these bytes and send them as a chunk.
        case send(Chunk)
        /// Call `nextChunks` again at this instant (the rate allows more then).
        case wake(at: Int64)
    }

    private struct Pending: Sendable {
        var request: UInt64
        var identity: String
        var offset: Int64
        var remaining: Int
    }

    /// The limits in force.
    public let configuration: Configuration
    /// Items held, by content identity (durations aside), with their sizes.
    public private(set) var held: [String: Int64] = [:]
    /// Bytes sent in chunks so far.
    public private(set) var bytesServed: Int64 = 0
    private var queues: [UUID: [Pending]] = [:]
    private var turn: [UUID] = []
    private var tokens: Double
    private var refilled: Int64?

    /// A server of nothing yet.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        tokens = configuration.burstBytes
    }

    /// Serves the item `identity` of `size` bytes from now on.
    public mutating func hold(_ identity: String, size: Int64) {
        held[ContentIdentity.content(of: identity)] = size
    }

    /// Stops serving `identity`; its queued requests are dropped.
    public mutating func release(_ identity: String) {
        let content = ContentIdentity.content(of: identity)
        held[content] = nil
        for asker in queues.keys { queues[asker]?.removeAll { $0.identity == content } }
    }

    /// Whether any request waits.
    public var hasWork: Bool { queues.values.contains { !$0.isEmpty } }

    /// A request from `asker`.
    public mutating func onRequest(from asker: UUID, id: UInt64, identity: String, offset: Int64, length: Int) -> [RequestDirective] {
        let content = ContentIdentity.content(of: identity)
        guard let size = held[content] else { return [.refuse(.refusal(id: id, reason: .notHeld), to: asker)] }
        guard length > 0, length <= configuration.maximumRequestLength, offset >= 0, offset < size,
              Int64(length) <= size - offset else {
            return [.refuse(.refusal(id: id, reason: .badRange), to: asker)]
        }
        if queues[asker] == nil && queues.count >= configuration.maximumAskers {
            return [.refuse(.refusal(id: id, reason: .busy), to: asker)]
        }
        guard queues[asker, default: []].count < configuration.maximumQueuedPerAsker else {
            return [.refuse(.refusal(id: id, reason: .busy), to: asker)]
        }
        if queues[asker] == nil { turn.append(asker) }
        queues[asker, default: []].append(Pending(request: id, identity: content, offset: offset, remaining: length))
        return [.serve]
    }

    /// `asker` left: what it asked for is dropped.
    public mutating func onAskerGone(_ asker: UUID) {
        queues[asker] = nil
        turn.removeAll { $0 == asker }
    }

    /// The chunks to send now, one asker after another, within the rate; then when to come back
    /// if work is left.
    public mutating func nextChunks(now: Int64) -> [ServeDirective] {
        if let refilled {
            tokens = min(configuration.burstBytes, tokens + Double(max(0, now - refilled)) * configuration.bytesPerSecond / 1e9)
        }
        refilled = now
        var directives: [ServeDirective] = []
        while !turn.isEmpty {
            let asker = turn.removeFirst()
            guard var queue = queues[asker], !queue.isEmpty else {
                queues[asker] = nil
                continue
            }
            let length = min(configuration.chunkSize, queue[0].remaining)
            guard tokens >= Double(length) else {
                turn.insert(asker, at: 0)
                let wait = (Double(length) - tokens) / configuration.bytesPerSecond * 1e9
                directives.append(.wake(at: now + max(1, Int64(wait.rounded(.up)))))
                return directives
            }
            tokens -= Double(length)
            bytesServed += Int64(length)
            let pending = queue[0]
            directives.append(.send(Chunk(asker: asker, request: pending.request, identity: pending.identity,
                                          offset: pending.offset, length: length)))
            queue[0].offset += Int64(length)
            queue[0].remaining -= length
            if queue[0].remaining == 0 { queue.removeFirst() }
            if queue.isEmpty {
                queues[asker] = nil
            } else {
                queues[asker] = queue
                turn.append(asker)
            }
        }
        return directives
    }

    /// A chunk that could not be sent now (the link's queue is full): it goes back to the front
    /// of its asker's queue, to be sent after `nextChunks` at the instant returned.
    public mutating func onSendDeferred(_ chunk: Chunk, now: Int64, retryAfter: Int64 = 20_000_000) -> Int64 {
        tokens += Double(chunk.length)
        bytesServed -= Int64(chunk.length)
        var queue = queues[chunk.asker] ?? []
        if let first = queue.first, first.request == chunk.request, first.offset == chunk.offset + Int64(chunk.length) {
            queue[0].offset = chunk.offset
            queue[0].remaining += chunk.length
        } else {
            queue.insert(Pending(request: chunk.request, identity: chunk.identity, offset: chunk.offset, remaining: chunk.length), at: 0)
        }
        if queues[chunk.asker] == nil { turn.insert(chunk.asker, at: 0) }
        queues[chunk.asker] = queue
        return now + retryAfter
    }
}
