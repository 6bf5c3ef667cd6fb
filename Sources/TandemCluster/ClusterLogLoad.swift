import Foundation
import TandemNATS
import TandemNet

/// One relay's load of one session's log: where the replay starts and ends, which messages the
/// replica takes from the replay and which from the stream's follower, and when the replica holds
/// everything the log held when the load began.
///
/// Two sources feed the replica. The stream's follower (`ClusterStreamFollower`) delivers every
/// message stored after `since`, the stream sequence it had delivered when the log registered
/// with it. A consumer of the session's own subject replays what came up to `since`, from
/// `start`: the first part of the newest whole snapshot the log names, or the subject's start.
/// The follower's messages wait until the replay is over, then apply as they come.
///
/// The end of the load is the subject's last message, as the relay read it after registering,
/// but never less than what the relay's own follower showed of the subject: the newest message
/// of the subject it delivered before registering (`seen`) and any it delivered since: a read
/// that missed a stored message, believed, would load an empty replica, and a joiner of a live
/// session would be refused "no session".
///
/// Pure: `ClusterSessionLog` asks it under its lock and does what it says, on the NATS loop.
struct ClusterLogLoad: Sendable {
    /// The stream sequence the follower had delivered when the log registered with it.
    private(set) var since: UInt64?
    /// The subject sequence the replay is over at: the last message up to `since`, or `since`.
    private(set) var target: UInt64 = 0
    /// Where the replay consumer starts.
    private(set) var start: UInt64 = 1
    /// The subject sequence the log ended at when the load began: once the replica has applied
    /// it, the session is loaded.
    private(set) var end: UInt64?
    /// Whether the replay is over and the follower's messages apply as they come.
    private(set) var live = false
    /// Whether the replica has applied `end`.
    private(set) var loaded = false
    /// The follower's messages, while the replay is not over.
    private(set) var waiting: [JetStreamStoredMessage] = []

    /// A load not begun.
    init() {}

    /// What to do once the load's bounds are known.
    enum Begin: Equatable, Sendable {
        /// The log is empty: the session is loaded now (with nothing), and the follower's
        /// messages apply from now.
        case empty
        /// Nothing before `since` to replay: the follower's messages apply from now.
        case live
        /// Replay the subject from this stream sequence.
        case replay(from: UInt64)
    }

    /// The log registered with its follower at `since`, the follower having delivered `seen` as
    /// the subject's newest message before that (0: none), and the subject's last message was read
    /// as `read` (0: none) with its newest whole snapshot's first part at or after `snapshotStart`
    /// (1: none named). Returns what to do.
    mutating func begin(since: UInt64, seen: UInt64, read: UInt64, snapshotStart: UInt64 = 1) -> Begin {
        let end = max(read, seen, waiting.last?.sequence ?? 0)
        self.since = max(since, snapshotStart - 1)
        self.end = end
        start = snapshotStart
        // The replay is over at the subject's last message up to `since`: `end`, or, when the log
        // took more after it, the first of those (which the follower holds).
        let since = self.since!
        target = end <= since ? end : since
        if end == 0 { loaded = true }
        if end == 0 { return .empty }
        return target >= start && target > 0 ? .replay(from: start) : .live
    }

    /// What to do with a message of the replay.
    enum Replayed: Equatable, Sendable {
        /// Not wanted (the replay is over, or not begun).
        case ignore
        /// Apply it; `last`: the replay is over after it.
        case apply(last: Bool)
        /// The replay is over before it (the follower has it).
        case over
    }

    /// A message of the replay, at `sequence`.
    func replayed(_ sequence: UInt64) -> Replayed {
        guard !live, let since else { return .ignore }
        if sequence > since { return .over }
        return .apply(last: sequence >= target)
    }

    /// The replay is over: the follower's messages that waited, to apply in order; nil when it
    /// was over already (or not begun).
    mutating func goLive() -> [JetStreamStoredMessage]? {
        guard !live, let since else { return nil }
        live = true
        defer { waiting = [] }
        return waiting.filter { $0.sequence > since }
    }

    /// A message from the follower: true to apply it now, false when it waits (or is older than
    /// what the replay covers).
    mutating func followed(_ message: JetStreamStoredMessage) -> Bool {
        if live { return message.sequence > (since ?? 0) }
        waiting.append(message)
        return false
    }

    /// The replica took the message at `sequence`: true once, when the session is loaded.
    mutating func applied(_ sequence: UInt64) -> Bool {
        guard !loaded, let end, sequence >= end else { return false }
        loaded = true
        return true
    }

    /// The newest message of the session the follower delivered since the log registered (0: none).
    var newestFollowed: UInt64 { waiting.map(\.sequence).max() ?? 0 }

    /// Stopped: nothing waits any more.
    mutating func stop() { waiting = [] }

    /// The header a batch of the log carries, naming the `covers` of the newest whole snapshot
    /// its relay had read: a relay loading the session starts its replay after it.
    static let snapshotHeader = "Tandem-Snapshot"

    /// Where a load of `session` starts, from the subject's last message (`payload` and
    /// `headers`): right after the `covers` of the snapshot that message ends (its last part), or
    /// of the snapshot its header names (a batch's, or a part's of a snapshot not yet whole);
    /// 1 (the subject's start) otherwise. The first message of the subject after a snapshot's
    /// `covers` is its first part: parts are stored with compare-and-set, the first on `covers`,
    /// and a purge since took only what came before a newer snapshot, which is then the first.
    static func start(of session: UUID, lastPayload payload: [UInt8], headers: NATSHeaders?) -> UInt64 {
        if ClusterLogCodec.isSnapshotPart(payload), let part = try? ClusterLogCodec.decodeSnapshotPart(payload),
           part.session == session, part.index + 1 == part.count {
            return part.covers + 1
        }
        guard let named = headers?[snapshotHeader].flatMap(UInt64.init), named > 0 else { return 1 }
        return named + 1
    }
}
