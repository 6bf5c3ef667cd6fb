import Foundation
import TandemClock
import TandemNATS
import TandemNet
import TandemWire

/// What a relay's load of a session replayed: whether it started from a snapshot, and how many
/// messages and entries of the log it applied until the session was loaded.
public struct ClusterLoadReport: Sendable, Hashable {
    /// How many snapshots the load took the state of (one when it started from a snapshot).
    public var snapshots = 0
    /// The bytes those snapshots took in the log.
    public var snapshotBytes = 0
    /// How many messages of entries it applied.
    public var messages = 0
    /// How many entries of the session those messages held.
    public var entries = 0

    /// A report of nothing replayed yet.
    public init() {}
}

/// The compaction of a session's log, as the relay the core names carries it out
/// (`RelayCore+ClusterCompaction.swift`), and the snapshots as every relay reads them.
///
/// Taking a snapshot: the core names this relay (`wantCompaction`); this relay's publisher holds
/// its queue, and once nothing of this relay's is on its way to the log and the replica has
/// applied all this relay has stored (`tryCompact`, on the NATS loop), the replica's state is
/// encoded on the relay's loop right after the last message handed to it, `covers`, and nothing
/// else. Its parts are published one after another, the first with compare-and-set on `covers`,
/// each next one on the one before: stored, they follow `covers` on the subject with nothing
/// between. Another relay's entry in between fails the compare-and-set: the snapshot is given up
/// (what of it was stored is an incomplete snapshot, which every reader skips), and tried again
/// once the replica has applied more, at most `compactionAttempts` times. Stored whole, the
/// subject is purged below its first part (`ClusterRelay.compacted`), and the queue goes on.
///
/// Reading one: the parts are collected in order; a message that is not the next part ends the
/// collection. A whole snapshot whose `covers` the replica has applied already (this relay
/// follows the log) only restarts the counts; one it has not (the log's start is the snapshot,
/// or a purge took entries before this relay read them) gives the replica its state.
extension ClusterSessionLog {
    /// Where this relay's compaction of the log is.
    enum Compaction: Sendable, Equatable {
        /// None wanted.
        case idle
        /// The core asked for one; it starts once the replica has caught up with this relay.
        case wanted
        /// Its snapshot is being taken or published.
        case underWay
    }

    /// A snapshot whose parts are being read from the log.
    struct SnapshotAssembly: Sendable {
        var relay: UInt64
        var snapshot: UInt64
        var covers: UInt64
        var count: Int
        /// The index of the part expected next.
        var next = 0
        /// Whether the replica is to take its state (it has not applied what it covers).
        var restore: Bool
        /// The state so far (collected only when `restore`).
        var state: [UInt8] = []
        /// The bytes its messages take in the log.
        var stored = 0
        /// When its first part was read.
        var started = ContinuousClock.now
    }

    /// How long this relay's entries wait at most while another relay's snapshot is being
    /// written: the parts of one go one after another, each on the one before, so that an entry
    /// of another relay's between them makes it fail.
    static let foreignSnapshotWait = Duration.seconds(2)

    /// Whether `state` has another relay's snapshot being written (its parts read in part), read
    /// within `foreignSnapshotWait`: this relay's queue waits for it.
    static func awaitsForeignSnapshot(_ state: State, relay: UInt64) -> Bool {
        guard let assembly = state.assembly, assembly.relay != relay, assembly.next < assembly.count else { return false }
        return ContinuousClock.now - assembly.started < foreignSnapshotWait
    }

    /// Lets the held queue go once nothing holds it any more: no compaction of this relay's,
    /// and no other relay's snapshot being written (on the NATS loop). Only a held queue is let
    /// go, so that one batch at a time stays in flight.
    func resumeHeld() {
        let resume = state.withLock { state -> Bool in
            guard state.held, !state.stopped, state.compaction == .idle, !Self.awaitsForeignSnapshot(state, relay: cluster.relay) else {
                return false
            }
            state.held = false
            return true
        }
        if resume { publishOnLoop() }
    }

    /// After `foreignSnapshotWait`, the queue held for another relay's snapshot goes on even if
    /// that snapshot never completes (its relay stopped halfway). Called under the state's lock.
    func scheduleForeignSnapshotTimeout() {
        // A timer on the connection's loop, not a task: resuming the queue is all it does.
        cluster.connection.schedule(after: TimeSpan(Self.foreignSnapshotWait + .milliseconds(10))) { [weak self] in
            self?.resumeHeld()
        }
    }

    /// How many times in a row a compaction is tried before it waits for the next bound.
    static let compactionAttempts = 3

    /// A snapshot's part from the log, on the NATS loop.
    func consumeSnapshotPart(_ message: JetStreamStoredMessage) {
        let sequence = message.sequence
        guard let part = try? ClusterLogCodec.decodeSnapshotPart(message.payload), part.session == session else {
            // Not readable (another version's): skipped, as an entry that does not decode is.
            noteConsumed(sequence, entries: 0, snapshotPart: false)
            return
        }
        let complete = state.withLock { state -> SnapshotAssembly? in
            if part.index == 0 {
                state.assembly = SnapshotAssembly(relay: part.relay, snapshot: part.snapshot, covers: part.covers, count: part.count,
                                                  restore: part.covers > state.consumed)
            }
            guard var assembly = state.assembly, assembly.relay == part.relay, assembly.snapshot == part.snapshot,
                  assembly.next == part.index, assembly.count == part.count else {
                state.assembly = nil
                return nil
            }
            if assembly.restore { assembly.state += part.bytes }
            assembly.stored += message.payload.count
            assembly.next += 1
            guard assembly.next == assembly.count else {
                state.assembly = assembly
                return nil
            }
            state.assembly = nil
            state.snapshotCovers = max(state.snapshotCovers, assembly.covers)
            if assembly.restore, !state.load.loaded {
                state.report.snapshots += 1
                state.report.snapshotBytes += assembly.stored
            }
            return assembly
        }
        if let complete {
            let cluster = self.cluster, session = self.session
            cluster.server.withCore { core, now in
                // A state that does not decode (another version's) changes nothing.
                let directives = (try? core.applyClusterSnapshot(complete.state, of: session, stored: complete.stored,
                                                                 restore: complete.restore, at: now)) ?? []
                if !core.holdsSession(session), core.releaseClusterSession(session) { cluster.release(session) }
                return directives
            }
        }
        noteConsumed(sequence, entries: 0, snapshotPart: true)
    }

    /// The core named this relay to compact the log (on the relay's loop).
    func wantCompaction() {
        let wanted = state.withLock { state in
            guard state.compaction == .idle, !state.stopped else { return false }
            state.compaction = .wanted
            state.failures = 0
            state.failedCovers = nil
            return true
        }
        if wanted { cluster.connection.execute { [self] in tryCompact() } }
    }

    /// Takes the snapshot if one is wanted and the replica holds everything this relay stored,
    /// with nothing of this relay's on its way (on the NATS loop).
    func tryCompact() {
        let covers = state.withLock { state -> UInt64? in
            // Another relay's snapshot half read (given up, or still coming) is no obstacle: parts
            // change no replica, and this snapshot's first part ends that one's collection.
            guard state.compaction == .wanted, state.load.live, !state.stopped, !state.inFlight, state.lastOwn <= state.consumed,
                  state.consumed > (state.failedCovers ?? 0) else { return nil }
            state.compaction = .underWay
            return state.consumed
        }
        guard let covers else { return }
        let session = self.session
        // On the relay's loop after every message handed to the replica through `covers`, and
        // before any after it.
        cluster.server.withCore { [self] core, _ in
            let snapshot = core.clusterSnapshot(of: session)
            let task = Task { [self] in await publishSnapshot(snapshot, covers: covers) }
            state.withLock { state in
                if state.stopped { task.cancel() } else { state.compactor = task }
            }
            return []
        }
    }

    /// Publishes the snapshot's parts, each on the one before, the first on `covers`.
    private func publishSnapshot(_ snapshot: [UInt8]?, covers: UInt64) async {
        guard let snapshot else {
            finishCompaction(first: nil, covers: covers, retry: false)
            return
        }
        let number = UInt64.random(in: 1...UInt64.max)
        let parts = ClusterLogCodec.parts(of: snapshot, session: session, relay: cluster.relay, snapshot: number, covers: covers)
        var expected = covers
        var first: UInt64?
        for part in parts {
            guard !Task.isCancelled else {
                finishCompaction(first: nil, covers: covers, retry: false)
                return
            }
            let options = JetStreamPublishOptions(messageID: "\(String(cluster.relay, radix: 16))-s\(String(number, radix: 16))-\(part.index)",
                                                  expectedLastSubjectSequence: expected, expectedStream: stream,
                                                  retryWindow: .seconds(5), mayHaveBeenStored: false)
            do throws(JetStreamError) {
                let ack = try await cluster.jetStream.publish(subject, payload: ClusterLogCodec.encode(part), headers: snapshotHeaders(), options: options)
                expected = ack.sequence
                first = first ?? ack.sequence
                state.withLock { $0.lastOwn = max($0.lastOwn, ack.sequence) }
            } catch {
                finishCompaction(first: nil, covers: covers, retry: true)
                return
            }
        }
        finishCompaction(first: first, covers: covers, retry: false)
    }

    /// The compaction is over: stored from `first` on (the subject is purged below it), or not
    /// (tried again once the replica has applied past `covers`, when `retry` and attempts are
    /// left). The held queue goes on.
    private func finishCompaction(first: UInt64?, covers: UInt64, retry: Bool) {
        let resume = state.withLock { state -> Bool in
            state.compactor = nil
            if first != nil || !retry {
                state.compaction = .idle
                state.failures = 0
                state.failedCovers = nil
            } else {
                cluster.compactionGiveUps.withLock { $0 += 1 }
                state.failures += 1
                state.failedCovers = covers
                state.compaction = state.failures < Self.compactionAttempts ? .wanted : .idle
            }
            defer { state.held = false }
            return state.held && !state.stopped
        }
        if let first { cluster.compacted(session, before: first) }
        cluster.connection.execute { [self] in
            if resume { publishOnLoop() } else { tryCompact() }
        }
    }
}

extension ClusterRelay {
    /// How long after a snapshot is stored the entries it covers are purged: the other relays
    /// following the session have read them by then (one that has not takes the snapshot's state).
    static let compactionPurgeDelay = Duration.milliseconds(500)

    /// `session`'s log holds a whole snapshot from `first` on: what comes before it is purged
    /// after `compactionPurgeDelay` (retried a few times; a later compaction's purge replaces it).
    func compacted(_ session: UUID, before first: UInt64) {
        let jetStream = self.jetStream
        let stream = Self.stream(for: session), subject = Self.subject(for: session)
        compactionCount.withLock { $0 += 1 }
        let task = Task {
            try? await Task.sleep(for: Self.compactionPurgeDelay)
            for _ in 0..<5 where !Task.isCancelled {
                do throws(JetStreamError) {
                    _ = try await jetStream.purge(stream: stream, subject: subject, before: first)
                    return
                } catch {
                    try? await Task.sleep(for: .milliseconds(500))
                }
            }
        }
        compactionPurges.withLock { purges in
            purges[session]?.cancel()
            purges[session] = task
        }
    }

    /// Cancels the purges behind snapshots not yet done (on stop).
    func cancelCompactionPurges() {
        for task in compactionPurges.withLock({ Array($0.values) }) { task.cancel() }
    }

    /// How many snapshots this relay has stored in the logs it follows.
    public var compactions: Int { compactionCount.withLock { $0 } }

    /// How many of this relay's snapshots were given up (another relay's entry came first, or a
    /// publish failed) before they were stored whole.
    public var compactionsGivenUp: Int { compactionGiveUps.withLock { $0 } }

    /// What the load of `session` replayed (`ClusterLoadReport`), while this relay follows it.
    public func loadReport(of session: UUID) -> ClusterLoadReport? {
        followedLog(session)?.state.withLock { $0.report }
    }
}
