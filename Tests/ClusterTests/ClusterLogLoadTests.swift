import Foundation
import Testing
@testable import TandemCluster
import TandemNATS
@testable import TandemNet
import TandemWire

/// A relay's load of a session's log on virtual time (`ClusterLogLoad`): a session stream of
/// stored messages, a relay core with a joiner's hello waiting, and the load's two sources (the
/// replay of the subject and the stream's follower) fed in the orders NATS may deliver them.
@Suite("Cluster log load")
struct ClusterLogLoadTests {
    /// A session stream: messages by stream sequence, each session's subject interleaved with
    /// another's.
    struct Stream {
        var messages: [JetStreamStoredMessage] = []
        static let other = "tandem.s.0.00000000-0000-0000-0000-000000000000"

        @discardableResult
        mutating func store(_ payload: [UInt8], on subject: String, headers: NATSHeaders? = nil) -> UInt64 {
            let sequence = UInt64(messages.count + 1)
            messages.append(JetStreamStoredMessage(subject: subject, sequence: sequence, headers: headers, payload: payload))
            return sequence
        }

        /// Each entry of `log` as a message of `session`'s subject, with `gap` messages of another
        /// subject after each; `headers` for each.
        mutating func store(_ log: [ClusterLogEntry], of session: UUID, gap: Int = 2, headers: NATSHeaders? = nil) {
            for entry in log where entry.session == session {
                store(ClusterLogCodec.encode([entry]), on: ClusterRelay.subject(for: session), headers: headers)
                for _ in 0..<gap { store([1, 2, 3], on: Self.other) }
            }
        }

        func subject(_ session: UUID, from start: UInt64 = 1) -> [JetStreamStoredMessage] {
            messages.filter { $0.subject == ClusterRelay.subject(for: session) && $0.sequence >= start }
        }
    }

    /// A relay core with a joiner's hello for `session` waiting for the session to load.
    struct Joiner {
        var core = ClusterCompactionCoreTests.fresh(relay: 99)
        var answers: [RelayDirective] = []
        var load = ClusterLogLoad()
        var consumed: UInt64 = 0
        var applied = 0
        var parts: [ClusterSnapshotPart] = []
        var partBytes = 0
        var restore = false
        let session: UUID

        init(_ session: UUID) {
            self.session = session
            let identity = SigningKeyPair()
            _ = core.onOpen(RelayConnectionID(1), entropy: [UInt8](repeating: 7, count: RelayCore.entropyLength), at: 0)
            let participant = RelayParticipantEntry(id: RelayAuthenticator.participantID(for: identity.publicKey), publicKey: identity.publicKey,
                                                    displayName: "late")
            let hello = RelayHello(sessionID: session, participant: participant, create: false, activity: [], resume: false, received: 0, ticket: nil)
            answers += core.onFrame(.hello(hello), from: RelayConnectionID(1), at: 0)
            #expect(answers.isEmpty && core.takeClusterOutput().follow == [session], "the hello waits for the load")
        }

        /// One message handed to the replica, as `ClusterSessionLog.consume` hands it.
        mutating func apply(_ message: JetStreamStoredMessage) {
            if ClusterLogCodec.isSnapshotPart(message.payload), let part = try? ClusterLogCodec.decodeSnapshotPart(message.payload) {
                // Whether the replica takes its state is decided at its first part, as the shell does.
                if part.index == 0 { parts = []; partBytes = 0; restore = part.covers > consumed }
                parts.append(part)
                partBytes += message.payload.count
                if parts.count == part.count, parts.enumerated().allSatisfy({ $0.offset == $0.element.index }) {
                    do {
                        answers += try core.applyClusterSnapshot(parts.flatMap(\.bytes), of: session, stored: partBytes, restore: restore, at: 1)
                    } catch {
                        Issue.record("the snapshot does not apply: \(error)")
                    }
                }
            } else {
                parts = []
                for entry in (try? ClusterLogCodec.decode(message.payload)) ?? [] where entry.session == session {
                    answers += core.applyCluster(entry, at: 1)
                }
                applied += 1
            }
            consumed = max(consumed, message.sequence)
            if load.applied(message.sequence) { answers += core.onClusterSessionLoaded(session, at: 1) }
        }

        /// The replay is over: what waited applies.
        mutating func goLive() {
            for message in load.goLive() ?? [] { apply(message) }
        }

        /// A message from the stream's follower.
        mutating func followed(_ message: JetStreamStoredMessage) {
            if load.followed(message) { apply(message) }
        }

        /// The load, as `ClusterSessionLog.replay` runs it: `early` follower messages before the
        /// bounds are known, the replay of the subject from where `begin` says, then `late` ones.
        mutating func run(_ stream: Stream, since: UInt64, seen: UInt64, read: UInt64, snapshotStart: UInt64 = 1,
                          early: [JetStreamStoredMessage], late: [JetStreamStoredMessage]) {
            for message in early { followed(message) }
            switch load.begin(since: since, seen: seen, read: read, snapshotStart: snapshotStart) {
            case .empty:
                answers += core.onClusterSessionLoaded(session, at: 1)
                goLive()
            case .live:
                goLive()
            case let .replay(from):
                for message in stream.subject(session, from: from) {
                    switch load.replayed(message.sequence) {
                    case .ignore: break
                    case .over: goLive()
                    case let .apply(last):
                        apply(message)
                        if last { goLive() }
                    }
                    if load.live { break }
                }
            }
            for message in late { followed(message) }
        }

        var challenged: Bool { answers.contains { if case .send(_, .challenge) = $0 { true } else { false } } }
        var refusedNoSession: Bool {
            answers.contains { if case let .send(_, .refusal(fault)) = $0 { fault.code == .sessionNotFound } else { false } }
        }
    }

    /// A live session's log: created on one relay, joined and used on another.
    static func liveSession() -> (ReplicaWorld, SessionFixture) {
        var world = ReplicaWorld(relays: 2)
        let session = SessionFixture()
        ClusterCompactionCoreTests.busySession(&world, session)
        return (world, session)
    }

    @Test("a read that says 'no message' of a log the stream's follower has delivered: the joiner is challenged, not refused 'no session'")
    func staleEmptyRead() throws {
        let (world, session) = Self.liveSession()
        var stream = Stream()
        stream.store(world.log, of: session.id)
        let last = try #require(stream.subject(session.id).last?.sequence)
        let expected = try #require(ClusterCompactionCoreTests.Replica(world.cores[0], session.id))

        // The follower delivered the whole stream before the log registered (the session's
        // messages routed nowhere, remembered as `seen`); the read of the subject's end said none.
        var joiner = Joiner(session.id)
        joiner.run(stream, since: UInt64(stream.messages.count), seen: last, read: 0, early: [], late: [])
        #expect(joiner.challenged && !joiner.refusedNoSession)
        #expect(ClusterCompactionCoreTests.Replica(joiner.core, session.id) == expected)

        // The same read believed alone (what the follower showed left out, as a relay did): the
        // replica loads empty, and with nothing more from the follower the joiner of a live
        // session is refused once the hold for its session is over.
        var believing = Joiner(session.id)
        believing.run(stream, since: UInt64(stream.messages.count), seen: 0, read: 0, early: [], late: [])
        #expect(!believing.refusedNoSession && !believing.challenged, "the joiner waits for the session")
        believing.answers += believing.core.onTick(at: RelayCore.clusterAbsenceHold)
        #expect(!believing.refusedNoSession, "still within the hold")
        believing.answers += believing.core.onTick(at: 1 + RelayCore.clusterAbsenceHold)
        #expect(believing.refusedNoSession && !believing.core.holdsSession(session.id))
        #expect(believing.core.takeClusterOutput().released == [session.id], "the session is no longer followed")
    }

    @Test("a read of 'no message' from a stream leader behind the replica that the creator's relay followed: the joiner waits for this relay's follower to deliver the session, and is challenged, not refused 'no session'")
    func leaderBehindTheFollowers() throws {
        let (world, session) = Self.liveSession()
        var stream = Stream()
        stream.store(world.log, of: session.id)
        let expected = try #require(ClusterCompactionCoreTests.Replica(world.cores[0], session.id))
        let first = try #require(stream.subject(session.id).first?.sequence)

        // The creator was welcomed (its relay's follower, on a replica that had applied the
        // creation, delivered it); this relay's follower had not delivered it when the log
        // registered, and the leader, which had not applied it either, read the subject as empty,
        // and so did its stream information. The follower delivers the log afterwards.
        var joiner = Joiner(session.id)
        joiner.run(stream, since: first - 1, seen: 0, read: 0, early: [], late: stream.subject(session.id))
        #expect(joiner.challenged && !joiner.refusedNoSession)
        #expect(ClusterCompactionCoreTests.Replica(joiner.core, session.id) == expected)

        // Another joiner that comes while the session is awaited waits with it.
        var late = Joiner(session.id)
        late.run(stream, since: first - 1, seen: 0, read: 0, early: [], late: [])
        let identity = SigningKeyPair()
        let participant = RelayParticipantEntry(id: RelayAuthenticator.participantID(for: identity.publicKey), publicKey: identity.publicKey,
                                                displayName: "later")
        _ = late.core.onOpen(RelayConnectionID(2), entropy: [UInt8](repeating: 8, count: RelayCore.entropyLength), at: 1)
        let hello = RelayHello(sessionID: session.id, participant: participant, create: false, activity: [], resume: false, received: 0, ticket: nil)
        late.answers += late.core.onFrame(.hello(hello), from: RelayConnectionID(2), at: 1)
        #expect(late.answers.isEmpty && late.core.takeClusterOutput().follow.isEmpty, "both wait; the log is followed already")
        for message in stream.subject(session.id) { late.followed(message) }
        let challenged = Set(late.answers.compactMap { if case let .send(connection, .challenge) = $0 { connection } else { nil } })
        #expect(challenged == [RelayConnectionID(1), RelayConnectionID(2)])
    }

    @Test("whatever the follower had delivered when the log registered, and whichever of its messages come before the replay's, the joiner finds the whole session")
    func everyInterleaving() throws {
        let (world, session) = Self.liveSession()
        var stream = Stream()
        stream.store(world.log, of: session.id)
        let expected = try #require(ClusterCompactionCoreTests.Replica(world.cores[0], session.id))
        let subject = ClusterRelay.subject(for: session.id)
        var cases = 0
        for since in 0...UInt64(stream.messages.count) {
            let delivered = stream.messages.filter { $0.sequence <= since && $0.subject == subject }
            let after = stream.messages.filter { $0.sequence > since && $0.subject == subject }
            for split in 0...after.count {
                var joiner = Joiner(session.id)
                joiner.run(stream, since: since, seen: delivered.last?.sequence ?? 0, read: after.last?.sequence ?? delivered.last?.sequence ?? 0,
                           early: Array(after.prefix(split)), late: Array(after.dropFirst(split)))
                #expect(joiner.challenged && !joiner.refusedNoSession, "since \(since), \(split) early")
                #expect(ClusterCompactionCoreTests.Replica(joiner.core, session.id) == expected, "since \(since), \(split) early")
                cases += 1
            }
        }
        #expect(cases > 50)
    }

    @Test("a load starts from the newest whole snapshot the log's last message names and lands where a replay of the whole log does, with fewer messages")
    func startsFromTheSnapshot() throws {
        let live = Self.liveSession()
        var world = live.0
        let session = live.1
        var stream = Stream()
        stream.store(world.log, of: session.id)
        let covers = try #require(stream.subject(session.id).last?.sequence)
        let head = world.log.count
        // A snapshot of the replica at `covers`, in two parts, then the log goes on; the entries
        // after it name it, as a relay's batches do once its replica has read it. Nothing is purged.
        let state = try #require(world.cores[0].clusterSnapshot(of: session.id))
        let half = state.count / 2
        let pieces = [Array(state[..<half]), Array(state[half...])]
        for (index, piece) in pieces.enumerated() {
            let part = ClusterSnapshotPart(session: session.id, relay: 1, snapshot: 42, covers: covers, index: index, count: 2, bytes: piece)
            stream.store(ClusterLogCodec.encode(part), on: ClusterRelay.subject(for: session.id))
        }
        world.send(.message(sequence: 7, recipients: .everyone, reliable: true, body: Array("after".utf8)), from: 1, connection: 1, at: 6_000)
        _ = world.admit(session, on: 0, connection: 3)
        world.pump(at: 7_000)
        var named = NATSHeaders()
        named[ClusterLogLoad.snapshotHeader] = String(covers)
        stream.store(Array(world.log[head...]), of: session.id, headers: named)
        let expected = try #require(ClusterCompactionCoreTests.Replica(world.cores[1], session.id))

        let last = try #require(stream.subject(session.id).last)
        let start = ClusterLogLoad.start(of: session.id, lastPayload: last.payload, headers: last.headers)
        #expect(start == covers + 1)
        let end = UInt64(stream.messages.count)
        var fromSnapshot = Joiner(session.id)
        fromSnapshot.run(stream, since: end, seen: 0, read: last.sequence, snapshotStart: start, early: [], late: [])
        var whole = Joiner(session.id)
        whole.run(stream, since: end, seen: 0, read: last.sequence, early: [], late: [])
        #expect(fromSnapshot.challenged && whole.challenged)
        #expect(ClusterCompactionCoreTests.Replica(fromSnapshot.core, session.id) == expected)
        #expect(ClusterCompactionCoreTests.Replica(whole.core, session.id) == expected)
        #expect(fromSnapshot.applied == world.log.count - head && whole.applied == world.log.count, "\(fromSnapshot.applied) and \(whole.applied) messages of entries")

        // The follower behind the snapshot (it had delivered less than `covers` when the log
        // registered): the snapshot comes from the follower, what came before it is left out.
        var behind = Joiner(session.id)
        let later = stream.subject(session.id, from: 3)
        behind.run(stream, since: 2, seen: 1, read: last.sequence, snapshotStart: start, early: Array(later.prefix(4)), late: Array(later.dropFirst(4)))
        #expect(behind.challenged && ClusterCompactionCoreTests.Replica(behind.core, session.id) == expected)
        #expect(behind.applied == world.log.count - head)
    }

    @Test("where a load starts: after the covers of the snapshot the last message ends or names; the subject's start otherwise")
    func startFromTheLastMessage() {
        let session = UUID()
        func part(_ index: Int, of count: Int, covers: UInt64, session: UUID = session) -> [UInt8] {
            ClusterLogCodec.encode(ClusterSnapshotPart(session: session, relay: 1, snapshot: 5, covers: covers, index: index, count: count, bytes: [1]))
        }
        var named = NATSHeaders()
        named[ClusterLogLoad.snapshotHeader] = "30"
        let batch = ClusterLogCodec.encode([ClusterLogEntry(session: session, relay: 1, connection: 1, event: .away(participant: UUID()))])
        #expect(ClusterLogLoad.start(of: session, lastPayload: part(1, of: 2, covers: 90), headers: named) == 91, "a whole snapshot's last part")
        #expect(ClusterLogLoad.start(of: session, lastPayload: part(0, of: 2, covers: 90), headers: named) == 31, "one still being written: the one before")
        #expect(ClusterLogLoad.start(of: session, lastPayload: part(0, of: 2, covers: 90), headers: nil) == 1)
        #expect(ClusterLogLoad.start(of: session, lastPayload: part(0, of: 1, covers: 90, session: UUID()), headers: nil) == 1, "another session's")
        #expect(ClusterLogLoad.start(of: session, lastPayload: batch, headers: named) == 31)
        #expect(ClusterLogLoad.start(of: session, lastPayload: batch, headers: nil) == 1)
    }
}
