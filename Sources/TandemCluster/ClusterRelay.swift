import Foundation
import Synchronization
import TandemClock
import TandemNATS
import TandemNet
import TandemWire

/// Why a relay could not join its cluster.
public struct ClusterRelayError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, with the cluster's address as `NATSURL` prints it (secrets masked).
    public let reason: String
    /// An error saying `reason`.
    public init(_ reason: String) { self.reason = reason }
    /// The reason.
    public var description: String { reason }
}

/// A `RelayServer` in a cluster of relays that share sessions through NATS JetStream
/// (`tandem serve --cluster URL`).
///
/// Each session has a subject, `tandem.s.<shard>.<session>`, in one of `streamCount` streams
/// (`TANDEM_SESSIONS_<shard>`, the shard a hash of the session's identity), replicated over the
/// NATS cluster. The relay's core, in cluster mode, submits each event that changes a session as
/// a `ClusterLogEntry`; this shell appends them in batches, one publish at a time per session,
/// with the expected last subject sequence (compare-and-set) and a message id, and follows each
/// stream with one ordered consumer (`ClusterStreamFollower`), handing every entry of the
/// sessions it serves back to the core on the relay's loop in log order. A conflict means
/// another relay appended first: the shell waits until its replica has applied what it missed,
/// then publishes again. Datagrams cross on core NATS, `tandem.u.<session>`. Sealed bodies are
/// carried as the relay received them.
public final class ClusterRelay: Sendable {
    /// How many streams the sessions are spread over.
    public static let streamCount = 3
    /// The relay's number in the cluster's log (random).
    public let relay: UInt64
    /// The cluster's address (prints with its secret masked).
    public let url: NATSURL
    /// The relay it connects.
    public let server: RelayServer

    /// The relay's connection to NATS, which others on this relay (its cluster time) may share.
    public let connection: NATSConnection
    let jetStream: JetStream
    /// The followers of the session streams, by shard.
    private let followers: [ClusterStreamFollower]
    private let logs = Mutex<[UUID: ClusterSessionLog]>([:])
    /// The connection's event handler that tells the core of NATS's comings and goings.
    private let watcher = Mutex<UInt64?>(nil)
    /// The next heartbeat, a timer on the connection's loop; stopped for good once `stop()` runs.
    private let heartbeat = Mutex<(next: ScheduledTask?, stopped: Bool)>((nil, false))
    /// The sweep for ended sessions' subjects left unpurged (`sweepEndedSessions`).
    private let sweeper = Mutex<Task<Void, Never>?>(nil)
    /// The subjects a sweep found live, with the last sequence it read: unchanged at the next
    /// sweep, the log still shows the session live, and is not replayed again.
    let sweptLive = Mutex<[String: UInt64]>([:])
    /// The purges of ended sessions' subjects waiting for their delay, by session.
    private let purges = Mutex<[UUID: (id: UUID, task: Task<Void, Never>)]>([:])
    /// The purges behind each session's newest snapshot, while they wait or run.
    let compactionPurges = Mutex<[UUID: Task<Void, Never>]>([:])
    /// How many snapshots this relay stored.
    let compactionCount = Mutex(0)
    /// How many of this relay's snapshots were given up.
    let compactionGiveUps = Mutex(0)
    /// How long after a session ended (or emptied) its subject is purged: the other relays have
    /// read its end by then, and remember it for as long (`RelayCoreConfiguration.endedMemory`),
    /// so that the log and their memories forget it together.
    public let purgeDelay: Duration
    /// The sessions replaying their logs, at most `maximumConcurrentLoads` at once.
    private let loads: Mutex<ClusterLoadQueue>
    /// How many sessions' logs this relay replays at once; the hellos for the others wait their
    /// turn (within the handshake timeout, 10 s, after which their clients try again).
    public var maximumConcurrentLoads: Int { loads.withLock { $0.limit } }
    /// The most sessions that replayed their logs at once so far.
    public var peakConcurrentLoads: Int { loads.withLock { $0.peak } }
    /// Where relays say they are alive, every `heartbeatInterval`.
    public static let heartbeatSubject = "tandem.relays"
    /// How often a relay says it is alive (the core treats 3 s of silence as its death).
    public static let heartbeatInterval = Duration.seconds(1)
    /// `heartbeatInterval` on the loop's clock.
    private static let heartbeatSpan = TimeSpan(heartbeatInterval)

    private init(server: RelayServer, url: NATSURL, jetStream: JetStream, streamsEnd: [UInt64], relay: UInt64, purgeDelay: Duration,
                 concurrentLoads: Int) {
        self.server = server
        self.purgeDelay = purgeDelay
        loads = Mutex(ClusterLoadQueue(limit: concurrentLoads))
        self.url = url
        self.connection = jetStream.connection
        self.jetStream = jetStream
        self.relay = relay
        followers = streamsEnd.enumerated().map { shard, end in
            ClusterStreamFollower(jetStream: jetStream, stream: Self.stream(shard: shard), subjects: Self.subjects(shard: shard), after: end)
        }
    }

    /// The stream that holds `session`'s subject.
    public static func stream(for session: UUID) -> String { stream(shard: shard(of: session)) }
    /// The stream of shard `shard`.
    public static func stream(shard: Int) -> String { "TANDEM_SESSIONS_\(shard)" }
    /// The subjects of shard `shard`'s stream: every session's log subject in it.
    static func subjects(shard: Int) -> String { "tandem.s.\(shard).*" }
    /// `session`'s log subject.
    public static func subject(for session: UUID) -> String { "tandem.s.\(shard(of: session)).\(session.uuidString.lowercased())" }
    /// `session`'s datagram subject (core NATS).
    public static func datagramSubject(for session: UUID) -> String { "tandem.u.\(session.uuidString.lowercased())" }
    /// A session's shard: a hash of its identity that is the same in every process.
    static func shard(of session: UUID) -> Int {
        withUnsafeBytes(of: session.uuid) { bytes in Int(bytes.reduce(UInt32(2_166_136_261)) { ($0 ^ UInt32($1)) &* 16_777_619 } % UInt32(streamCount)) }
    }

    /// Connects `server` (made, not yet started) to the NATS cluster at `url`, makes sure the
    /// session streams exist (`replicas` copies each; by default 3 when the server is in a
    /// cluster, else 1) and puts the server's core in cluster mode. Throws, with one line, when
    /// NATS cannot be reached or JetStream refuses. Start the server afterwards. An ended
    /// session's subject is purged `purgeDelay` after its end (by default a relay's default
    /// `endedMemory`, 60 s). At most `concurrentLoads` sessions replay their logs at once. The
    /// subjects of sessions that ended more than `purgeDelay` ago and that no relay purged are
    /// swept at once and then every `sweepInterval` (nil: never, but by `sweepEndedSessions()`).
    /// A session's log holds at most `sessionLogLimit` bytes (`RelayCore+ClusterLogCap.swift`);
    /// each session stream at most `streamLimit` bytes, new entries refused past it (a last
    /// resort, set on streams this relay creates or finds). A session's log is compacted once
    /// `compactionThreshold` bytes of entries follow its last snapshot, or `compactionEntries`
    /// entries as heavy as it (nil: the core's defaults, `RelayCore+ClusterCompaction.swift`).
    public static func connect(_ server: RelayServer, to url: NATSURL, replicas: Int? = nil,
                               commitMargin: Int64 = 10_000_000, purgeDelay: Duration? = nil,
                               concurrentLoads: Int = 16, sweepInterval: Duration? = ClusterRelay.sweepInterval,
                               sessionLogLimit: Int = RelayCore.defaultClusterSessionLogLimit,
                               compactionThreshold: Int? = nil, compactionEntries: Int? = nil,
                               streamLimit: Int = ClusterRelay.defaultStreamLimit) async throws(ClusterRelayError) -> ClusterRelay {
        var configuration = NATSConfiguration()
        configuration.name = "tandem-relay"
        let connection: NATSConnection
        do {
            connection = try await NATSConnection.connect(to: url, configuration: configuration)
        } catch {
            throw ClusterRelayError("cannot reach the NATS cluster at \(url): \(error.reason)")
        }
        guard connection.serverInfo?.jetStream != false else {
            await connection.close()
            throw ClusterRelayError("the NATS server at \(url) has no JetStream (start it with -js)")
        }
        let copies = replicas ?? (connection.serverInfo?.cluster == nil ? 1 : 3)
        let jetStream = JetStream(connection: connection)
        let streamsEnd: [UInt64]
        do {
            streamsEnd = try await ensureStreams(jetStream, replicas: copies, limit: streamLimit)
        } catch {
            await connection.close()
            throw ClusterRelayError("JetStream at \(url) refused the session streams: \(error)")
        }
        let cluster = ClusterRelay(server: server, url: url, jetStream: jetStream, streamsEnd: streamsEnd, relay: UInt64.random(in: 1..<UInt64.max),
                                   purgeDelay: purgeDelay ?? .nanoseconds(RelayCoreConfiguration().endedMemory),
                                   concurrentLoads: concurrentLoads)
        for follower in cluster.followers { follower.start() }
        let relay = cluster.relay
        server.withCore { core, _ in
            core.enableCluster(relay: relay, commitMargin: commitMargin, sessionLogLimit: sessionLogLimit,
                               compactionThreshold: compactionThreshold, compactionEntries: compactionEntries)
            return []
        }
        server.clusterOutput = { [weak cluster] output in cluster?.carry(output) }
        cluster.watchConnection()
        await cluster.startHeartbeat()
        if let sweepInterval { cluster.startSweeping(every: sweepInterval) }
        return cluster
    }

    /// The most bytes a session stream holds unless told otherwise (a stream of the
    /// `streamCount`): room for many sessions at their caps, short of a disk.
    public static let defaultStreamLimit = 8 * 1024 * 1024 * 1024
    /// The least a stream's limit is lowered to for a server short of storage.
    static let minimumStreamLimit = 16 * 1024 * 1024

    /// Creates the session streams (or sets their limits, when they exist), waiting (at most
    /// 20 s) for their leaders, and returns each one's last sequence, by shard: where this
    /// relay's followers start. Each holds at most `limit` bytes (less when the servers have
    /// less storage left to reserve for it, none below `minimumStreamLimit`) and then refuses new
    /// entries: dropping old ones would cut the start off some session's log.
    private static func ensureStreams(_ jetStream: JetStream, replicas: Int, limit: Int) async throws(JetStreamError) -> [UInt64] {
        let deadline = ContinuousClock.now + .seconds(20)
        var limit: Int? = limit
        var shard = 0
        while shard < Self.streamCount {
            let configuration = JetStreamStreamConfiguration(
                name: stream(shard: shard), subjects: [subjects(shard: shard)], storage: .file, replicas: replicas,
                maximumBytes: limit, maximumMessageSize: 1024 * 1024, duplicateWindow: 120_000_000_000, allowDirect: true,
                discardsNew: true)
            if try await ensureStream(jetStream, configuration, deadline: deadline) {
                shard += 1
            } else {
                // JetStream reserves each stream's limit on its servers' storage and refuses more
                // than they have left: every stream half as much (those made are updated down),
                // down to `minimumStreamLimit`, then none (each session's own cap still holds).
                limit = limit.flatMap { $0 > Self.minimumStreamLimit ? $0 / 2 : nil }
                shard = 0
            }
        }
        var ends: [UInt64] = []
        for shard in 0..<Self.streamCount {
            while true {
                do {
                    ends.append(try await jetStream.streamInfo(stream(shard: shard)).state.lastSequence)
                    break
                } catch {
                    if ContinuousClock.now > deadline { throw error }
                }
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
        return ends
    }

    /// Creates the stream `configuration` describes (waiting for its leader), or updates the one
    /// of that name another relay made; false when the servers have not the storage its limit
    /// would reserve.
    private static func ensureStream(_ jetStream: JetStream, _ configuration: JetStreamStreamConfiguration,
                                     deadline: ContinuousClock.Instant) async throws(JetStreamError) -> Bool {
        while true {
            do {
                let info = try await jetStream.createStream(configuration)
                if configuration.replicas == 1 || info.cluster?.leader != nil { return true }
            } catch where error.kind == .streamNameInUse || isShortOfStorage(error) {
                // Made already (by another relay, or by this one with a larger limit; JetStream
                // checks the storage before the name), maybe with other limits: this relay's go
                // on it (a stream with another replica count keeps its own, which an update
                // cannot change). Not made, and short of storage: a smaller limit is tried.
                guard let existing = try? await jetStream.streamInfo(configuration.name) else {
                    if configuration.maximumBytes != nil { return false }
                    if ContinuousClock.now > deadline { throw error }
                    try? await Task.sleep(for: .milliseconds(100))
                    continue
                }
                var update = configuration
                update.replicas = existing.configuration.replicas
                do {
                    _ = try await jetStream.updateStream(update)
                } catch where isShortOfStorage(error) && configuration.maximumBytes != nil {
                    return false
                } catch {
                    // Left as it is: its own limits hold.
                }
                return true
            } catch {
                if ContinuousClock.now > deadline { throw error }
            }
            if ContinuousClock.now > deadline { return true }
            try? await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Whether JetStream refused for want of storage: err_code 10047 or 10023 on one server, 10005
    /// (no peers for the placement) in a cluster when it says it is for storage.
    private static func isShortOfStorage(_ error: JetStreamError) -> Bool {
        [10047, 10023].contains(error.errorCode ?? 0) || (error.errorCode == 10005 && error.reason.lowercased().contains("storage"))
    }

    /// Tells the core when NATS goes and comes back: a handler on the connection's loop, no task.
    private func watchConnection() {
        let server = self.server
        let handler = connection.handleEvents { event in
            switch event {
            case .disconnected, .closed:
                server.withCore { core, now in core.setClusterAvailable(false, at: now) }
            case .connected, .reconnected:
                server.withCore { core, now in core.setClusterAvailable(true, at: now) }
            case .serverError:
                break
            }
        }
        watcher.withLock { $0 = handler }
    }

    /// Says every second that this relay is alive, and tells the core whenever another says so.
    private func startHeartbeat() async {
        let server = self.server, connection = self.connection
        _ = try? await connection.subscribe(to: Self.heartbeatSubject) { message in
            guard message.payload.count == 8 else { return }
            let relay = message.payload.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            server.withCore { core, now in
                core.onClusterHeartbeat(relay, at: now)
                return []
            }
        }
        let payload = (0..<8).map { UInt8(truncatingIfNeeded: relay >> UInt64(56 - 8 * $0)) }
        // A timer on the connection's loop, no task: each beat publishes there and sets the next.
        connection.execute { [self] in beat(payload) }
    }

    /// Publishes a heartbeat and sets the next one `heartbeatInterval` later, until `stop()`. On
    /// the connection's loop.
    private func beat(_ payload: [UInt8]) {
        guard !heartbeat.withLock({ $0.stopped }) else { return }
        _ = connection.publishOnLoop(Self.heartbeatSubject, payload: payload)
        let next = connection.schedule(after: Self.heartbeatSpan) { [self] in beat(payload) }
        let stopped = heartbeat.withLock { heartbeat -> Bool in
            if !heartbeat.stopped { heartbeat.next = next }
            return heartbeat.stopped
        }
        if stopped { next.cancel() }
    }

    /// Stops following every session and closes the connection to NATS (stop the server first).
    public func stop() async {
        if let handler = watcher.withLock({ $0 }) { connection.stopHandlingEvents(handler) }
        heartbeat.withLock { heartbeat -> ScheduledTask? in
            heartbeat.stopped = true
            return heartbeat.next
        }?.cancel()
        sweeper.withLock { $0?.cancel() }
        for purge in purges.withLock({ Array($0.values) }) { purge.task.cancel() }
        cancelCompactionPurges()
        let all = logs.withLock { logs in
            defer { logs.removeAll() }
            return Array(logs.values)
        }
        for log in all { log.stop() }
        for follower in followers { follower.stop() }
        await connection.close()
    }

    /// What the core submitted, on the relay's loop: quick, it only queues.
    func carry(_ output: RelayClusterOutput) {
        for session in output.released { release(session) }
        for session in output.follow { log(for: session).follow() }
        var grouped: [UUID: [ClusterLogEntry]] = [:]
        var order: [UUID] = []
        for entry in output.entries {
            if grouped[entry.session] == nil { order.append(entry.session) }
            grouped[entry.session, default: []].append(entry)
        }
        for session in order { log(for: session).append(grouped[session]!) }
        // Unreliable: in order, in one hop onto the NATS loop, and dropped (never queued without
        // bound) when NATS cannot take them.
        connection.publishAndForget(output.datagrams.map { (Self.datagramSubject(for: $0.session), ClusterLogCodec.encode($0)) })
    }

    /// Stops following `session`, which its replica no longer holds (on the loop, once the core
    /// has released it).
    func release(_ session: UUID) {
        let log = logs.withLock { $0.removeValue(forKey: session) }
        log?.stop()
        loadFinished(session)
    }

    /// Whether `session` may replay its log now; if not, it starts when another finishes.
    func admitLoad(_ session: UUID) -> Bool { loads.withLock { $0.request(session) } }

    /// `session` replayed its log (or gave up, or is released): the next ones waiting start.
    func loadFinished(_ session: UUID) {
        let started = loads.withLock { $0.finish(session) }
        for next in started {
            if let log = logs.withLock({ $0[next] }) {
                log.replay()
            } else {
                loadFinished(next)
            }
        }
    }

    /// Purges `session`'s subject through `sequence` (the message that ended it) after
    /// `purgeDelay`: what the log appended after its end (a new session of the same identity, say)
    /// stays. Retried a few times; a relay that stops first leaves the subject as it is.
    func purge(_ session: UUID, through sequence: UInt64) {
        let jetStream = self.jetStream, delay = purgeDelay
        let stream = Self.stream(for: session), subject = Self.subject(for: session)
        // Stored under the lock before it can run, and removed only by itself: a short delay
        // cannot finish it before it is stored, nor can it remove a newer purge of the session.
        let id = UUID()
        purges.withLock { purges in
            purges[session]?.task.cancel()
            let task = Task { [weak self] in
                try? await Task.sleep(for: delay)
                for _ in 0..<5 where !Task.isCancelled {
                    do throws(JetStreamError) {
                        try await jetStream.purge(stream: stream, subject: subject, before: sequence + 1)
                        break
                    } catch {
                        try? await Task.sleep(for: .seconds(1))
                    }
                }
                self?.purges.withLock { purges in
                    if purges[session]?.id == id { purges[session] = nil }
                }
            }
            purges[session] = (id, task)
        }
    }

    /// Keeps the sweeper's task, to be cancelled on stop.
    func setSweeper(_ task: Task<Void, Never>) {
        sweeper.withLock { $0 = task }
    }

    /// Whether this relay follows `session` or has its purge under way: the sweep leaves it.
    func followsOrPurges(_ session: UUID) -> Bool {
        logs.withLock { $0[session] != nil } || purges.withLock { $0[session] != nil }
    }

    /// How many purges of ended sessions' subjects wait for their delay or are under way.
    public var pendingPurges: Int { purges.withLock { $0.count } }

    /// How many sessions this relay follows.
    public var followedSessions: Int { logs.withLock { $0.count } }

    /// The follower of `session`'s stream.
    func follower(for session: UUID) -> ClusterStreamFollower { followers[Self.shard(of: session)] }

    /// The log of `session` this relay follows, if it does.
    func followedLog(_ session: UUID) -> ClusterSessionLog? { logs.withLock { $0[session] } }

    private func log(for session: UUID) -> ClusterSessionLog {
        logs.withLock { logs in
            if let log = logs[session] { return log }
            let log = ClusterSessionLog(session: session, cluster: self)
            logs[session] = log
            return log
        }
    }
}

/// One session's log as one relay sees it: what feeds its replica, and the publisher of what the
/// relay submits, one batch in flight at a time.
///
/// The replica is fed in two parts, in log order. When the session starts to be followed, its
/// stream's follower (`ClusterStreamFollower`) names the stream sequence it delivered last and
/// routes everything after it here; those messages wait while a consumer of the session's own
/// subject replays what came up to that sequence, from the subject's start, and are applied
/// once it has (the replay consumer then goes). So a loading session costs a consumer of its
/// own, and a followed one none.
///
/// Both work by callbacks on the NATS connection's loop, with no task per message: the relay's
/// loop hands a batch to the NATS loop (one hop), the publish goes out and its acknowledgement
/// comes back there, and the next batch follows from the acknowledgement; deliveries are
/// decoded there and handed to the relay's loop (one hop). A publish that meets anything but a
/// plain acknowledgement (a conflict, a timeout, a stream between leaders, a lost connection)
/// goes on in a task, with the same compare-and-set, message id and retries, until
/// the queue is empty; the next append is on the loop again.
final class ClusterSessionLog: Sendable {
    let session: UUID
    let stream: String
    let subject: String
    /// Strong: `ClusterRelay.stop()` and `release` end the cycle.
    let cluster: ClusterRelay
    let state = Mutex(State())

    struct State {
        /// The subject sequence of the last message handed to the core.
        var consumed: UInt64 = 0
        /// The subject sequence of this relay's last stored batch.
        var lastOwn: UInt64 = 0
        var queue: [ClusterLogEntry] = []
        var publishing = false
        var following = false
        var batches: UInt64 = 0
        /// The task that registers with the stream's follower, finds where the log ends and
        /// starts the replay.
        var replayer: Task<Void, Never>?
        /// The publisher's task while it is off the loop (after a conflict or a failed attempt),
        /// kept to be cancelled on stop; never started once `stopped` is set (both are set
        /// under this lock).
        var publisher: Task<Void, Never>?
        /// The consumer replaying the subject up to where the follower takes over, until it has.
        var consumer: JetStreamLoopConsumer?
        /// The load: what the replica takes from the replay and from the follower, and when the
        /// session is loaded (the core hears it then).
        var load = ClusterLogLoad()
        /// The `covers` of the newest whole snapshot the replica has read (0: none), which this
        /// relay's batches name (`ClusterLogLoad.snapshotHeader`).
        var snapshotCovers: UInt64 = 0
        var datagrams: UInt64?
        var stopped = false
        /// Whether this session's turn among the loads is over.
        var loadFinished = false
        /// Where this relay's compaction of the log is (`ClusterSessionLog+Compaction.swift`).
        var compaction = Compaction.idle
        /// Whether a batch of this relay's is taken for publishing and not yet stored (or failed).
        var inFlight = false
        /// Whether the publisher waits for the compaction under way (or wanted) to finish.
        var held = false
        /// The snapshot whose parts are being read from the log, if any.
        var assembly: SnapshotAssembly?
        /// The subject sequence a failed compaction had covered: the next waits for more.
        var failedCovers: UInt64?
        /// How many compactions failed in a row.
        var failures = 0
        /// What the load replayed.
        var report = ClusterLoadReport()
        /// The task publishing a snapshot, while one is.
        var compactor: Task<Void, Never>?
    }

    /// The most bytes of entries one message carries: under nats-server's 1 MiB default, and
    /// small enough that a read of it through `STREAM.MSG.GET` (base64 in JSON, a third larger)
    /// stays within what the client takes (`max_payload` and 64 KiB): the relay reads a
    /// subject's last message that way, and a larger one would cost it its connection.
    static let batchBytes = ClusterLogCodec.snapshotPartBytes

    init(session: UUID, cluster: ClusterRelay) {
        self.session = session
        self.cluster = cluster
        stream = ClusterRelay.stream(for: session)
        subject = ClusterRelay.subject(for: session)
    }

    func stop() {
        let (tasks, consumer, datagrams) = state.withLock { state in
            state.stopped = true
            state.load.stop()
            return ([state.replayer, state.publisher, state.compactor], state.consumer, state.datagrams)
        }
        cluster.follower(for: session).unregister(self)
        consumer?.stop()
        for task in tasks { task?.cancel() }
        if let datagrams {
            cluster.connection.unsubscribeAndForget(datagrams)
        }
    }

    /// Replays the log from its start, follows it, and tells the core once the replica has
    /// applied everything the log held when asked.
    func follow() {
        guard state.withLock({ state in
            defer { state.following = true }
            return !state.following
        }) else { return }
        if cluster.admitLoad(session) { replay() }
    }

    /// Its turn among the loads is over (loaded, given up, or the consumer ended), once.
    private func finishLoad() {
        guard state.withLock({ state in
            defer { state.loadFinished = true }
            return !state.loadFinished
        }) else { return }
        cluster.loadFinished(session)
    }

    /// The replica has applied everything the log held when the replay began.
    private func announce() {
        finishLoad()
        let cluster = self.cluster, session = self.session
        cluster.server.withCore { core, now in
            let directives = core.onClusterSessionLoaded(session, at: now)
            // Nobody holds or wants it (a hello for a session the log does not have, or a
            // stranger's made-up one): not followed, so that such hellos leave nothing behind.
            if !core.holdsSession(session), core.releaseClusterSession(session) { cluster.release(session) }
            return directives
        }
    }

    /// Replays the log now (its turn among the sessions loading at once has come): a task
    /// registers with the stream's follower and finds where the log ends, then a consumer of the
    /// subject on the NATS loop feeds the replica up to where the follower takes over.
    func replay() {
        let task = Task { [self] in
            let cluster = self.cluster
            let server = cluster.server
            let session = self.session
            let jetStream = cluster.jetStream
            await subscribeDatagrams()
            // Registered before the end is read: whatever the log takes from here on, the
            // follower delivers, and the end read covers what came before.
            let registration = cluster.follower(for: session).register(self)
            var read: JetStreamStoredMessage?
            var readEnd: UInt64?
            for _ in 0..<150 where registration != nil {
                do throws(JetStreamError) {
                    let last = try await jetStream.lastMessage(stream: stream, subject: subject)
                    read = last
                    readEnd = last.sequence
                    break
                } catch where error.kind == .messageNotFound {
                    readEnd = 0
                    break
                } catch {
                    if Task.isCancelled { return finishLoad() }
                    try? await Task.sleep(for: .milliseconds(100))
                }
            }
            var seen = registration?.seen ?? 0
            if registration != nil, readEnd == 0 { (readEnd, seen) = await recheckedEnd(seen: seen) }
            guard let registration, let readEnd else {
                // The log could not be read for 15 s (or the connection is closed): the hellos
                // waiting are refused as unavailable (not "not found"), and the session is not
                // followed.
                cluster.follower(for: session).unregister(self)
                finishLoad()
                server.withCore { core, now in
                    let directives = core.onClusterSessionUnavailable(session, at: now)
                    if core.releaseClusterSession(session) { cluster.release(session) }
                    return directives
                }
                return
            }
            let snapshotStart = read.map { ClusterLogLoad.start(of: session, lastPayload: $0.payload, headers: $0.headers) } ?? 1
            let begin = state.withLock { state in
                state.load.begin(since: registration.since, seen: seen, read: readEnd, snapshotStart: snapshotStart)
            }
            let from: UInt64
            switch begin {
            case .empty:
                announce()
                // Nothing to replay: the follower's messages apply from now, on the NATS loop.
                cluster.connection.execute { [self] in goLive() }
                return
            case .live:
                cluster.connection.execute { [self] in goLive() }
                return
            case let .replay(start):
                from = start
            }
            let consumer = JetStreamLoopConsumer(jetStream: jetStream, stream: stream, subject: subject, from: from,
                                                 deliver: { [weak self] message in self?.replayed(message) },
                                                 // The consumer ended with the connection; nothing more to apply.
                                                 ended: { [weak self] _ in self?.finishLoad() })
            let stopped = state.withLock { state in
                state.consumer = consumer
                return state.stopped
            }
            if stopped {
                finishLoad()
            } else {
                consumer.start()
            }
        }
        state.withLock { $0.replayer = task }
    }

    /// How long a load that read "no message" waits for the stream's follower before it believes it.
    static let recheckTimeout: Duration = .seconds(2)

    /// The subject's end once more, after its first reading said "no message" (the session's
    /// log is empty, and its hellos are refused "no session"), and what the follower's `seen`
    /// still counts for. The stream's last sequence is read (`STREAM.INFO`), the follower is
    /// waited for until it has delivered that far (at most `recheckTimeout`), and the end is read
    /// again. Any message of this subject the follower delivered since this log registered is a
    /// message the log holds, whatever the reading says: the end is at least the newest of them.
    /// When the follower had delivered a message of the subject before (`seen`), the end is read
    /// again until it shows one, for `recheckTimeout` at most; a log that still reads empty then
    /// was purged (its session ended), and `seen` counts for nothing. (0, 0) when the log is
    /// empty after all. Every load of an empty log pays this (a session's creation included):
    /// two requests more, and the follower's lag behind the stream.
    private func recheckedEnd(seen: UInt64) async -> (end: UInt64, seen: UInt64) {
        let jetStream = cluster.jetStream
        let follower = cluster.follower(for: session)
        let deadline = ContinuousClock.now + Self.recheckTimeout
        if let last = try? await jetStream.streamInfo(stream).state.lastSequence, last > follower.delivered {
            while follower.delivered < last, ContinuousClock.now < deadline, !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(5))
            }
        }
        while true {
            var end: UInt64 = 0
            do throws(JetStreamError) {
                end = try await jetStream.lastMessage(stream: stream, subject: subject).sequence
            } catch {
                end = 0
            }
            let followed = state.withLock { state in state.load.newestFollowed }
            if max(end, followed) > 0 || seen == 0 { return (max(end, followed), seen) }
            guard ContinuousClock.now < deadline, !Task.isCancelled else { return (0, 0) }
            try? await Task.sleep(for: .milliseconds(100))
        }
    }

    /// A message of the subject's replay, on the NATS loop: applied up to `since`; the replay is
    /// over at its target, or at the first message after `since` (the follower's already).
    private func replayed(_ message: JetStreamStoredMessage) {
        let step = state.withLock { state -> ClusterLogLoad.Replayed in
            state.stopped ? .ignore : state.load.replayed(message.sequence)
        }
        switch step {
        case .ignore:
            break
        case .over:
            goLive()
        case let .apply(last):
            consume(message)
            if last { goLive() }
        }
    }

    /// The replay is over (on the NATS loop): the replay's consumer goes, the follower's
    /// messages that waited are applied, and those to come are applied as they come.
    private func goLive() {
        let (waiting, consumer) = state.withLock { state -> ([JetStreamStoredMessage], JetStreamLoopConsumer?) in
            guard !state.stopped, let waiting = state.load.goLive() else { return ([], nil) }
            defer { state.consumer = nil }
            return (waiting, state.consumer)
        }
        consumer?.stop()
        for message in waiting { consume(message) }
    }

    /// A message of the subject from the stream's follower, on the NATS loop: applied once the
    /// replay is over, kept until then.
    func followed(_ message: JetStreamStoredMessage) {
        let now = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            return state.load.followed(message)
        }
        if now { consume(message) }
    }

    /// The stream's follower ended (its connection closed): nothing more is applied.
    func followerEnded() { finishLoad() }

    /// One stored message of the log, on the NATS loop: its entries go to the replica on the
    /// relay's loop, in log order.
    private func consume(_ message: JetStreamStoredMessage) {
        let cluster = self.cluster, session = self.session
        if ClusterLogCodec.isSnapshotPart(message.payload) {
            consumeSnapshotPart(message)
            return
        }
        let entries: [ClusterLogEntry]
        do {
            entries = try ClusterLogCodec.decode(message.payload)
        } catch {
            // Not ours (or a newer version's): skipped, the same on every relay of this build.
            entries = []
        }
        let sequence = message.sequence
        let applied = entries.count { $0.session == session }
        cluster.server.withCore { [self] core, now in
            var directives: [RelayDirective] = []
            for entry in entries where entry.session == session { directives += core.applyCluster(entry, at: now) }
            if core.takeClusterPurge(session) { cluster.purge(session, through: sequence) }
            if core.takeClusterCompaction(session) { wantCompaction() }
            // A session gone from the replica is no longer followed.
            if !core.holdsSession(session), core.releaseClusterSession(session) { cluster.release(session) }
            return directives
        }
        noteConsumed(sequence, entries: applied, snapshotPart: false)
    }

    /// The message at `sequence` (with `entries` of this session's, or a snapshot's part) is
    /// handed to the replica: the core hears that the session is loaded once the replica has
    /// applied what the log held when the replay began, and a compaction waiting for the replica
    /// may start. On the NATS loop.
    func noteConsumed(_ sequence: UInt64, entries: Int, snapshotPart: Bool) {
        let announceNow = state.withLock { state in
            state.consumed = max(state.consumed, sequence)
            if !snapshotPart { state.assembly = nil }
            if !state.load.loaded {
                state.report.messages += snapshotPart ? 0 : 1
                state.report.entries += entries
            }
            return state.load.applied(sequence)
        }
        if announceNow { announce() }
        tryCompact()
        resumeHeld()
    }

    private func subscribeDatagrams() async {
        let server = cluster.server
        let sid = try? await cluster.connection.subscribe(to: ClusterRelay.datagramSubject(for: session)) { message in
            guard let datagram = try? ClusterLogCodec.decodeDatagram(message.payload) else { return }
            server.withCore { core, now in core.onClusterDatagram(datagram, at: now) }
        }
        let stopped = state.withLock { state in
            state.datagrams = sid
            return state.stopped
        }
        if stopped, let sid { await cluster.connection.unsubscribe(sid) }
    }

    /// Queues `entries` for the log (on the relay's loop); one publisher per session appends
    /// them in order, starting on the NATS loop when none is at work.
    func append(_ entries: [ClusterLogEntry]) {
        let start = state.withLock { state in
            state.queue += entries
            defer { state.publishing = true }
            return !state.publishing
        }
        guard start else { return }
        cluster.connection.execute { [self] in publishOnLoop() }
    }

    /// The next batch to publish, nil once the queue is empty or the log is stopped (nothing
    /// reaches the log after `stop()`).
    private func nextBatch() -> (entries: [ClusterLogEntry], id: String)? {
        state.withLock { state in
            guard !state.stopped, !state.queue.isEmpty else {
                state.publishing = false
                return nil
            }
            // A compaction wanted or under way: the queue waits (still `publishing`) until its
            // snapshot is stored or given up (`finishCompaction`). So it does while another
            // relay's snapshot is being written, for a while (`awaitsForeignSnapshot`).
            if state.compaction != .idle || Self.awaitsForeignSnapshot(state, relay: cluster.relay) {
                if state.compaction == .idle, !state.held { scheduleForeignSnapshotTimeout() }
                state.held = true
                return nil
            }
            state.inFlight = true
            var bytes = 0
            var count = 0
            for entry in state.queue {
                let size = entry.encodedSizeEstimate
                if count > 0, bytes + size > Self.batchBytes || count >= ClusterLogCodec.maximumBatch { break }
                bytes += size
                count += 1
            }
            let batch = Array(state.queue.prefix(count))
            state.queue.removeFirst(count)
            state.batches += 1
            return (batch, "\(String(cluster.relay, radix: 16))-\(state.batches)-\(session.uuidString.prefix(8))")
        }
    }

    /// The options of a batch's publish: compare-and-set on what the replica and this relay
    /// last saw, the batch's message id.
    private func options(_ id: String, mayHaveBeenStored: Bool) -> JetStreamPublishOptions {
        let expected = state.withLock { max($0.consumed, $0.lastOwn) }
        return JetStreamPublishOptions(messageID: id, expectedLastSubjectSequence: expected, expectedStream: stream,
                                       retryWindow: .seconds(15), mayHaveBeenStored: mayHaveBeenStored)
    }

    /// The headers a message of this relay's carries: the `covers` of the newest whole snapshot
    /// the replica has read, so that a relay loading the session starts its replay there
    /// (`ClusterLogLoad.start`); none before any.
    func snapshotHeaders() -> NATSHeaders? {
        let covers = state.withLock { $0.snapshotCovers }
        guard covers > 0 else { return nil }
        var headers = NATSHeaders()
        headers[ClusterLogLoad.snapshotHeader] = String(covers)
        return headers
    }

    /// Publishes the next batch from the NATS loop; its acknowledgement, on the loop, stores it
    /// and publishes the next. Anything else hands the batch, and the queue after it, to a task
    /// (`publish(_:id:payload:after:)`, then `publishAll()`).
    func publishOnLoop() {
        // Stopped (`release` or `stop()` while an attempt was in flight): no further batch.
        guard !state.withLock({ $0.stopped }) else { return }
        guard let (batch, id) = nextBatch() else {
            tryCompact()
            return
        }
        let payload = ClusterLogCodec.encode(batch)
        cluster.jetStream.publishAttemptOnLoop(subject, payload: payload, headers: snapshotHeaders(), options: options(id, mayHaveBeenStored: false)) { [self] result in
            switch result {
            case let .success(ack):
                state.withLock {
                    $0.lastOwn = max($0.lastOwn, ack.sequence)
                    $0.inFlight = false
                }
                publishOnLoop()
            case let .failure(error):
                // Created and stored under one lock with the stop check: a `stop()` either sees
                // the task (and cancels it) or comes first (and no task starts).
                state.withLock { state in
                    guard !state.stopped else { return }
                    state.publisher = Task { [self] in
                        let going = await publish(batch, id: id, payload: payload, after: error)
                        self.state.withLock { $0.inFlight = false }
                        guard going else { return }
                        await publishAll()
                    }
                }
            }
        }
    }

    /// The rest of the queue, in a task (after a batch's publish on the loop failed).
    private func publishAll() async {
        while let (batch, id) = nextBatch() {
            let going = await publish(batch, id: id, payload: ClusterLogCodec.encode(batch), after: nil)
            state.withLock { $0.inFlight = false }
            guard going else { return }
        }
        // Held for a compaction, maybe: it may start now.
        cluster.connection.execute { [self] in tryCompact() }
    }

    /// Publishes one batch until it is stored or has failed for good, carrying on from a first
    /// attempt that failed with `first` (nil: none made yet); false once cancelled.
    private func publish(_ batch: [ClusterLogEntry], id: String, payload: [UInt8], after first: JetStreamError?) async -> Bool {
        let jetStream = cluster.jetStream
        let server = cluster.server
        var retriedConflict = false
        var mayHaveStored = false
        var conflicts = 0
        var failure = first
        // Whether `failure` is the loop's single attempt, which `publish` would have retried.
        var fromLoop = first != nil
        while true {
            if let error = failure {
                failure = nil
                let (retry, stored) = JetStream.retries(after: error)
                if error.kind == .wrongLastSequence && conflicts < 100 {
                    // Another relay appended first: apply what it appended, then try again.
                    conflicts += 1
                    retriedConflict = true
                    await awaitReplica()
                } else if fromLoop, retry {
                    // The loop's single attempt failed as `publish` retries: retried the same way
                    // (same message id, a pause first), knowing whether it may have been stored.
                    mayHaveStored = stored
                    try? await Task.sleep(for: .milliseconds(50))
                } else {
                    let reason = "\(error)"
                    server.withCore { core, now in core.onClusterPublishFailed(batch, reason: reason, at: now) }
                    return true
                }
                fromLoop = false
                if Task.isCancelled { return false }
            }
            do throws(JetStreamError) {
                let ack = try await jetStream.publish(subject, payload: payload, headers: snapshotHeaders(),
                                                      options: options(id, mayHaveBeenStored: retriedConflict || mayHaveStored))
                state.withLock { $0.lastOwn = max($0.lastOwn, ack.sequence) }
                return true
            } catch {
                failure = error
            }
        }
    }

    /// Waits (at most 5 s) until the replica has applied the subject's last message.
    private func awaitReplica() async {
        let end = (try? await cluster.jetStream.lastMessage(stream: stream, subject: subject).sequence) ?? 0
        let deadline = ContinuousClock.now + .seconds(5)
        while state.withLock({ $0.consumed }) < end, ContinuousClock.now < deadline, !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(1))
        }
    }
}
