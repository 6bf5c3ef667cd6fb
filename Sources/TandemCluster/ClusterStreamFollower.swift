import Foundation
import Synchronization
import TandemNATS

/// One relay's follower of one session stream (`TANDEM_SESSIONS_<shard>`, every subject
/// `tandem.s.<shard>.*`): a single ordered consumer for all the sessions of the shard, whose
/// deliveries are routed, by subject, to the session logs this relay follows.
///
/// One consumer per stream and relay, not per session and relay: nats-server signals every
/// consumer of a stream for each message the stream stores, so a thousand consumers per stream
/// cost the servers a thousand wake-ups, and each its filter's scan, per message
/// (docs/SCALING.md). The price is that a relay receives the messages of its shards' sessions
/// that it does not follow, and drops them by subject without decoding them.
///
/// A session that starts to be followed (`register`) is given the stream sequence delivered last:
/// everything after it comes from here, in stream order; what the session's log held up to it
/// the session's log replays itself, from the subject's start. Deliveries run on the NATS
/// connection's loop, as `JetStreamLoopConsumer`'s do.
final class ClusterStreamFollower: Sendable {
    private let routes: Routes
    private let consumer: JetStreamLoopConsumer

    /// Follows `stream`'s subjects (`subjects`, a wildcard) from the message after `sequence`
    /// (the stream's last sequence when the relay connected); call `start()`.
    init(jetStream: JetStream, stream: String, subjects: String, after sequence: UInt64) {
        let routes = Routes(delivered: sequence)
        self.routes = routes
        consumer = JetStreamLoopConsumer(jetStream: jetStream, stream: stream, subject: subjects, from: sequence + 1,
                                         deliver: { routes.deliver($0) }, ended: { routes.end($0) })
    }

    /// Starts following.
    func start() { consumer.start() }

    /// Stops following: nothing more is routed.
    func stop() {
        consumer.stop()
        routes.end(nil)
    }

    /// Where a log starts to be followed: everything after `since` comes from the follower; `seen`
    /// is the stream sequence of the newest message of the log's subject the follower delivered
    /// up to `since` (0: none, or none it remembers).
    struct Registration: Sendable, Equatable {
        /// The stream sequence the follower had delivered.
        var since: UInt64
        /// The newest message of the subject among those.
        var seen: UInt64
    }

    /// Routes the messages of `log`'s subject stored after the returned `since` to
    /// `log.followed(_:)`, in stream order, on the NATS loop; nil once the follower has ended
    /// (the connection closed), when nothing will be.
    func register(_ log: ClusterSessionLog) -> Registration? { routes.register(log) }

    /// Stops routing to `log` (a newer log of the same session is left as it is).
    func unregister(_ log: ClusterSessionLog) { routes.unregister(log) }

    /// The stream sequence of the last message delivered (the relay's starting point before any).
    var delivered: UInt64 { routes.delivered }

    /// How many subjects' newest messages a follower remembers at most.
    static let seenLimit = 1 << 17

    /// The routing table, apart so that the consumer's callbacks can hold it.
    private final class Routes: Sendable {
        private struct State {
            /// The stream sequence of the last message delivered.
            var delivered: UInt64
            var logs: [String: ClusterSessionLog] = [:]
            /// The stream sequence of the newest message delivered on each subject, followed or
            /// not: a log that registers learns that its subject is not empty, whatever a read of
            /// it says. Forgotten whole past `seenLimit` subjects (the reads are believed then).
            var seen: [String: UInt64] = [:]
            var ended = false
        }
        private let state: Mutex<State>

        init(delivered: UInt64) { state = Mutex(State(delivered: delivered)) }

        func register(_ log: ClusterSessionLog) -> Registration? {
            state.withLock { state in
                guard !state.ended else { return nil }
                state.logs[log.subject] = log
                return Registration(since: state.delivered, seen: state.seen[log.subject] ?? 0)
            }
        }

        var delivered: UInt64 { state.withLock { $0.delivered } }

        func unregister(_ log: ClusterSessionLog) {
            state.withLock { state in
                if state.logs[log.subject] === log { state.logs[log.subject] = nil }
            }
        }

        func deliver(_ message: JetStreamStoredMessage) {
            let log = state.withLock { state in
                state.delivered = max(state.delivered, message.sequence)
                if state.seen.count >= ClusterStreamFollower.seenLimit, state.seen[message.subject] == nil { state.seen.removeAll() }
                state.seen[message.subject] = message.sequence
                return state.logs[message.subject]
            }
            log?.followed(message)
        }

        /// The consumer ended (the connection closed, or the stream is gone): the logs still
        /// waiting for their history hear it, and nothing registers any more.
        func end(_ error: JetStreamError?) {
            let logs = state.withLock { state in
                state.ended = true
                defer { state.logs.removeAll() }
                return Array(state.logs.values)
            }
            for log in logs { log.followerEnded() }
        }
    }
}
