import Foundation
import TandemClock
import TandemNATS
import TandemNet

/// The sweep for ended sessions' subjects that no relay purged: the relay whose entry
/// ended a session purges its subject `purgeDelay` later, and one that stops (or dies) within the
/// delay leaves it as it is. So every cluster relay sweeps on start and every `sweepInterval`.
///
/// For each subject of the session streams whose last message is older than `purgeDelay`, the
/// sweep replays the subject into a scratch replica (a `RelayCore` of its own in cluster mode,
/// which applies the log exactly as a relay's replica does). If the session is gone from it once
/// the log is applied (ended, or emptied by its last participant's leave or departure), the
/// subject is purged through the message it read last, so that anything appended since (a new
/// session of the same identity) stays. A subject it cannot read whole, or with a message it
/// cannot decode (another version's), is left alone; so is a session this relay follows. A live
/// session is never purged: its replica holds it. A subject found live is not replayed again
/// until it takes another message.
extension ClusterRelay {
    /// How often a cluster relay sweeps for ended sessions' subjects left unpurged.
    public static let sweepInterval = Duration.seconds(300)
    /// How long the sweep waits for one subject's log before leaving it for the next sweep.
    static let sweepReplayTimeout = TimeSpan.seconds(30)

    /// Purges the subjects of sessions whose logs show them ended, and that have taken no entry
    /// for longer than `purgeDelay` (by the stream's clock against `now`); returns those
    /// sessions. Safe to run on several relays at once: a purge only removes what was read.
    @discardableResult
    public func sweepEndedSessions(now: Date = Date()) async -> [UUID] {
        let delay = Double(purgeDelay.components.seconds) + Double(purgeDelay.components.attoseconds) / 1e18
        var purged: [UUID] = []
        var live: [String: UInt64] = [:]
        defer { sweptLive.withLock { $0 = live } }
        for shard in 0..<Self.streamCount where !Task.isCancelled {
            let stream = Self.stream(shard: shard)
            guard let subjects = try? await jetStream.subjects(of: stream, matching: Self.subjects(shard: shard)) else { continue }
            for subject in subjects.keys.sorted() where !Task.isCancelled {
                guard let session = Self.session(ofSubject: subject), !followsOrPurges(session) else { continue }
                guard let last = try? await jetStream.lastMessage(stream: stream, subject: subject),
                      let stored = last.time.flatMap(Self.date(stamp:)), now.timeIntervalSince(stored) > delay else { continue }
                if sweptLive.withLock({ $0[subject] }) == last.sequence {
                    live[subject] = last.sequence
                    continue
                }
                switch await Self.logShowsEnded(session, stream: stream, subject: subject, through: last.sequence, jetStream: jetStream,
                                                 configuration: server.configuration) {
                case true?: break
                case false?:
                    live[subject] = last.sequence
                    continue
                case nil:
                    continue
                }
                guard !followsOrPurges(session) else { continue }
                do throws(JetStreamError) {
                    try await jetStream.purge(stream: stream, subject: subject, before: last.sequence + 1)
                    purged.append(session)
                } catch {
                    // Left for the next sweep.
                }
            }
        }
        return purged
    }

    /// Sweeps now and then every `interval` until stopped.
    func startSweeping(every interval: Duration) {
        let task = Task { [weak self] in
            while !Task.isCancelled {
                // Weak between sweeps: the loop ends once the relay is gone.
                guard let self else { return }
                await sweepEndedSessions()
                try? await Task.sleep(for: interval)
            }
        }
        setSweeper(task)
    }

    /// The session whose log subject is `subject` (`tandem.s.<shard>.<session>`).
    package static func session(ofSubject subject: String) -> UUID? {
        let tokens = subject.split(separator: ".")
        guard tokens.count == 4, tokens[0] == "tandem", tokens[1] == "s", let session = UUID(uuidString: String(tokens[3])),
              Self.subject(for: session) == subject else { return nil }
        return session
    }

    /// The instant of a stored message's RFC 3339 time stamp (`2026-12-01T22:45:00.123456789Z`),
    /// to the second.
    package static func date(stamp: String) -> Date? {
        guard let dot = stamp.firstIndex(where: { $0 == "." || $0 == "Z" || $0 == "+" }) else { return nil }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: String(stamp[..<dot]) + "Z")
    }

    /// Whether `subject`'s log, read through `last`, leaves a replica without the session: false
    /// too when it holds a message this build cannot decode; nil when it cannot be read whole in
    /// time (tried again at the next sweep). The scratch replica has the relay's `configuration`
    /// (its limits, `maximumParticipants` among them), so that it applies the log as the relay's
    /// own replica does: a default one could refuse a join the relay took and see a live session
    /// emptied.
    static func logShowsEnded(_ session: UUID, stream: String, subject: String, through last: UInt64, jetStream: JetStream,
                              configuration: RelayCoreConfiguration) async -> Bool? {
        var replica = RelayCore(configuration: configuration)
        // Relay 0 is no relay's number (each picks one from 1 on): every entry is another's.
        replica.enableCluster(relay: 0)
        let consumer = jetStream.orderedConsumer(stream: stream, subject: subject, from: 1)
        // A timer on the connection's loop, not a task: stopping the consumer is all it does.
        let timeout = jetStream.connection.schedule(after: sweepReplayTimeout) { consumer.stop() }
        defer {
            timeout.cancel()
            consumer.stop()
        }
        // A compacted log starts with a snapshot (its parts one after another): the replica takes
        // its state when it has not applied what it covers, as a relay's does.
        var applied: UInt64 = 0
        var assembly: (part: ClusterSnapshotPart, state: [UInt8], stored: Int)?
        do {
            for try await message in consumer {
                if let part = try? ClusterLogCodec.decodeSnapshotPart(message.payload), part.session == session {
                    if part.index == 0 { assembly = (part, [], 0) }
                    if let started = assembly, started.part.snapshot == part.snapshot, started.part.relay == part.relay,
                       started.part.count == part.count, part.index == started.part.index + (part.index == 0 ? 0 : 1) {
                        let whole = (part, started.state + part.bytes, started.stored + message.payload.count)
                        assembly = whole
                        if part.index + 1 == part.count {
                            assembly = nil
                            _ = try? replica.applyClusterSnapshot(whole.1, of: session, stored: whole.2, restore: part.covers > applied, at: 0)
                        }
                    } else {
                        assembly = nil
                    }
                } else {
                    assembly = nil
                    guard let entries = try? ClusterLogCodec.decode(message.payload) else { return false }
                    for entry in entries where entry.session == session { _ = replica.applyCluster(entry, at: 0) }
                }
                applied = message.sequence
                if message.sequence >= last { return !replica.holdsSession(session) }
            }
        } catch {
            // The connection went: left for the next sweep.
        }
        return nil
    }
}
