import Foundation
import Testing
@testable import TandemCluster
import TandemNATS
@testable import TandemNet
import TandemWire

/// Compaction on virtual time: relay cores in cluster mode fed one log (`ReplicaWorld`). When a
/// relay is named to compact, what its snapshot holds, and that a relay starting from the
/// snapshot and the entries after it holds what one that replayed the whole log holds.
@Suite("Cluster compaction, core")
struct ClusterCompactionCoreTests {
    /// What every relay holds alike of a session: its state without what is each relay's own.
    struct Replica: Equatable {
        struct Member: Equatable {
            var entry: RelayParticipantEntry
            var token: [UInt8]
            var away: Bool
            var received: UInt64
            var next: UInt64
            var pending: [RelayFrame]
            var upload: String?
            var home: UInt64?
        }
        var key: [UInt8]
        var activity: [UInt8]
        var members: [Member]
        var attachments: [RelayAttachmentEntry]
        var data: [[UInt8]]
        var journalBytes: Int
        var nextOrder: UInt64
        var lastEffectiveAt: Int64
        var history: [RelayOrderedEntry]
        var recentLimit: Int
        var publishers: [String]
        var former: [RelayParticipantEntry]
        var accountedBytes: Int
        var tokens: Int

        init?(_ core: RelayCore, _ session: UUID) {
            guard let state = core.sessions[session], let cluster = core.cluster else { return nil }
            key = state.key
            activity = state.activity
            members = state.order.compactMap { id in
                state.participants[id].map { participant in
                    Member(entry: participant.entry, token: participant.token.bytes, away: participant.away, received: participant.received,
                           next: participant.outbox.nextSequence, pending: Array(participant.outbox.pending),
                           upload: participant.upload.map { "\($0.request) \($0.entry) \($0.data) \($0.reserved) \(String(describing: $0.refusal))" },
                           home: cluster.homes[RelayCore.ParticipantKey(session: session, participant: id)])
                }
            }
            attachments = state.attachmentOrder.compactMap { state.attachments[$0]?.entry }
            data = state.attachmentOrder.compactMap { state.attachments[$0]?.data }
            journalBytes = state.journalBytes
            nextOrder = state.nextOrder
            lastEffectiveAt = state.lastEffectiveAt
            let retained = state.orderedHistory.retained
            history = retained.entries
            recentLimit = retained.recentLimit
            publishers = retained.publishers.map { "\($0.key) \($0.value.order) \($0.value.reflecting)" }.sorted()
            former = state.former
            accountedBytes = state.accountedBytes
            tokens = core.tokens.values.count { $0.session == session }
        }
    }

    static func fresh(relay: UInt64) -> RelayCore {
        var core = RelayCore(cookieKey: [UInt8](repeating: 1, count: 32))
        core.enableCluster(relay: relay)
        return core
    }

    /// A session with a bit of everything in its log, on two relays: three participants (one of
    /// whom leaves), attachments (one whole, one half uploaded), proposals of every retention,
    /// messages, acknowledgements and cursors.
    static func busySession(_ world: inout ReplicaWorld, _ session: SessionFixture) {
        _ = world.admit(session, on: 0, connection: 1, create: true)
        _ = world.admit(session, on: 1, connection: 1)
        _ = world.admit(session, on: 0, connection: 2)
        let whole = RelayAttachmentEntry(id: UUID(), owner: UUID(), size: 3_000, metadata: [1, 2, 3])
        world.send(.attachmentAdd(sequence: 1, entry: whole), from: 0, connection: 1, at: 1_000)
        world.send(.attachmentChunk(sequence: 2, id: whole.id, data: [UInt8](repeating: 0xA1, count: 3_000)[...]), from: 0, connection: 1, at: 1_000)
        world.send(.proposal(sequence: 1, retention: .playback, body: Array("play".utf8)), from: 1, connection: 1, at: 1_000)
        world.send(.proposal(sequence: 2, retention: .snapshot(reflecting: 1), body: Array("state at 1".utf8)), from: 1, connection: 1, at: 1_000)
        world.send(.proposal(sequence: 3, retention: .recent(count: 2), body: Array("chat 1".utf8)), from: 1, connection: 1, at: 1_000)
        world.send(.proposal(sequence: 3, retention: .kept, body: Array("activity".utf8)), from: 0, connection: 1, at: 1_000)
        world.send(.message(sequence: 1, recipients: .everyone, reliable: true, body: Array("hello".utf8)), from: 0, connection: 2, at: 1_000)
        world.pump(at: 2_000)
        world.send(.leave(sequence: 2), from: 0, connection: 2, at: 3_000)
        let half = RelayAttachmentEntry(id: UUID(), owner: UUID(), size: 5_000, metadata: [9])
        world.send(.attachmentAdd(sequence: 4, entry: half), from: 1, connection: 1, at: 3_000)
        world.send(.attachmentChunk(sequence: 5, id: half.id, data: [UInt8](repeating: 0xB2, count: 2_000)[...]), from: 1, connection: 1, at: 3_000)
        world.send(.proposal(sequence: 6, retention: .recent(count: 2), body: Array("chat 2".utf8)), from: 1, connection: 1, at: 3_000)
        world.pump(at: 4_000)
        // The creator acknowledges what it has, and the cursors take it to every relay.
        let heard = world.sequenced(0, 1).compactMap(\.sequence).max() ?? 0
        world.send(.ack(heard), from: 0, connection: 1, at: 5_000)
        world.record(world.cores[0].onTick(at: 2_000_000_000), on: 0)
        world.pump(at: 2_000_000_000)
    }

    @Test("a snapshot and the entries after it give the replica that the whole log gives, and a joiner there gets the whole journal and history")
    func snapshotPlusTailEqualsWholeLog() throws {
        var world = ReplicaWorld(relays: 2)
        let session = SessionFixture()
        Self.busySession(&world, session)
        #expect(world.log.contains { if case .cursor = $0.event { true } else { false } }, "the cursors reached the log")

        // A snapshot taken by the relay that holds the creator, at this point of the log.
        let covered = world.log.count
        let state = try #require(world.cores[0].clusterSnapshot(of: session.id))
        #expect(try ClusterSessionSnapshot.decode(state, session: session.id).state.order.count == 2)

        // The log goes on: a snapshot proposal, the half upload completed, a new participant, an
        // attachment removed, a message.
        let upload = try #require(world.cores[1].sessions[session.id]?.participants.values.compactMap(\.upload).first)
        world.send(.attachmentChunk(sequence: 7, id: upload.entry.id, data: [UInt8](repeating: 0xB3, count: 3_000)[...]), from: 1, connection: 1, at: 5_000)
        world.send(.proposal(sequence: 4, retention: .snapshot(reflecting: 4), body: Array("state at 4".utf8)), from: 0, connection: 1, at: 5_000)
        _ = world.admit(session, on: 1, connection: 2)
        let whole = try #require(world.cores[0].sessions[session.id]?.attachmentOrder.first)
        world.send(.attachmentRemove(sequence: 5, id: whole), from: 0, connection: 1, at: 6_000)
        world.send(.message(sequence: 8, recipients: .everyone, reliable: true, body: Array("after".utf8)), from: 1, connection: 1, at: 6_000)
        world.pump(at: 7_000)
        let tail = Array(world.log[covered...])
        #expect(tail.count >= 5)

        // One relay replays the whole log; another starts from the snapshot and the tail.
        var whole0 = Self.fresh(relay: 7)
        for entry in world.log { _ = whole0.applyCluster(entry, at: 8_000) }
        var loaded = Self.fresh(relay: 8)
        _ = try loaded.applyClusterSnapshot(state, of: session.id, stored: state.count + 64, restore: true, at: 8_000)
        #expect(loaded.clusterLogBytes(of: session.id) == state.count + 64 && loaded.clusterTailBytes(of: session.id) == 0)
        for entry in tail { _ = loaded.applyCluster(entry, at: 8_000) }

        let expected = try #require(Replica(whole0, session.id))
        #expect(Replica(loaded, session.id) == expected)
        #expect(Replica(world.cores[0], session.id) == expected)
        #expect(Replica(world.cores[1], session.id) == expected)
        #expect(expected.former.count == 1 && expected.members.count == 3 && expected.attachments.count == 1)
        #expect(loaded.accountedBytes == whole0.accountedBytes)
        // The counts after the snapshot: its bytes, and the tail's.
        let tailBytes = tail.map(\.encodedSizeEstimate).reduce(0, +)
        #expect(loaded.clusterTailBytes(of: session.id) == tailBytes)
        #expect(loaded.clusterLogBytes(of: session.id) == state.count + 64 + tailBytes)

        // A late joiner on the relay that loaded from the snapshot: the journal and the history
        // a joiner on the others gets.
        world.cores.append(loaded)
        world.outputs.append([:])
        world.cores.append(whole0)
        world.outputs.append([:])
        _ = world.admit(session, on: 2, connection: 5)
        let joiner = world.frames(2, 5)
        guard case let .welcome(welcome)? = joiner.first(where: { if case .welcome = $0 { true } else { false } }) else {
            Issue.record("no welcome: \(joiner)")
            return
        }
        let journal = joiner.compactMap { if case let .journalEntry(entry) = $0 { entry } else { nil } }
        let history = joiner.compactMap { if case let .historyEntry(entry) = $0 { entry } else { nil } }
        #expect(welcome.attachmentCount == 1 && journal == expected.attachments)
        #expect(!history.isEmpty && history == world.cores[3].sessions[session.id]?.orderedHistory.all)
        #expect(history.map(\.order) == world.cores[0].sessions[session.id]?.orderedHistory.all.map(\.order))
        #expect(welcome.participants.map(\.id) == world.cores[0].sessions[session.id]?.welcomeList.map(\.id))
        // Everyone agrees on the joiner after that.
        #expect(Replica(world.cores[2], session.id) == Replica(world.cores[0], session.id))
    }

    @Test("the relay whose entry takes the count since the last snapshot across the bound compacts, no other; a snapshot starts the count again")
    func compactionTriggers() throws {
        let threshold = 16 * 1024
        var world = ReplicaWorld(relays: 2, compactionThreshold: threshold)
        let session = SessionFixture()
        _ = world.admit(session, on: 0, connection: 1, create: true)
        _ = world.admit(session, on: 1, connection: 1)
        let body = [UInt8](repeating: 3, count: 1_000)
        var named: [[Int]] = [[], []]
        var sequence: [UInt64] = [0, 0]
        func send(from relay: Int, count: Int, at now: Int64) {
            for _ in 0..<count {
                sequence[relay] += 1
                world.send(.message(sequence: sequence[relay], recipients: .everyone, reliable: true, body: body), from: relay, connection: 1, at: now)
                world.pump(at: now)
                for index in 0..<2 where world.cores[index].takeClusterCompaction(session.id) {
                    named[index].append(world.cores[index].clusterTailBytes(of: session.id) ?? 0)
                }
            }
        }
        // Relay B's participant floods: at the bound, relay B is named, once.
        send(from: 1, count: 12, at: 1_000)
        #expect(named == [[], []] && world.cores[1].clusterTailBytes(of: session.id)! < threshold)
        send(from: 1, count: 4, at: 2_000)
        #expect(named[0].isEmpty && named[1].count == 1)
        #expect(named[1].allSatisfy { $0 >= threshold && $0 < threshold + 1_200 })
        #expect(world.cores[0].clusterTailBytes(of: session.id) == world.cores[1].clusterTailBytes(of: session.id))
        // It did not compact: at twice the bound, whoever's entry crosses it is named (relay A's
        // participant sends now), and relay B is not named again.
        for round in 0..<20 where named[0].isEmpty { send(from: 0, count: 1, at: 3_000 + Int64(round)) }
        #expect(named[0].count == 1 && named[1].count == 1)
        #expect(named[0].allSatisfy { $0 >= 2 * threshold && $0 < 2 * threshold + 1_200 })

        // A snapshot read from the log (both relays hold what it covers): the counts start again
        // from it, alike, and nothing is due until the bound is crossed again.
        let state = try #require(world.cores[0].clusterSnapshot(of: session.id))
        for index in 0..<2 {
            _ = try world.cores[index].applyClusterSnapshot(state, of: session.id, stored: state.count + 80, restore: false, at: 4_000)
            #expect(world.cores[index].clusterTailBytes(of: session.id) == 0)
            #expect(world.cores[index].clusterLogBytes(of: session.id) == state.count + 80)
        }
        send(from: 1, count: 10, at: 5_000)
        #expect(named[0].count == 1 && named[1].count == 1)
        // The bound is the snapshot's size when that is larger than the threshold.
        #expect(world.cores[0].compactionBound(of: session.id) == max(threshold, state.count + 80))
    }

    @Test("many small entries name one relay to compact at each multiple of the entry bound, once they weigh as much as the last snapshot")
    func compactionByEntries() throws {
        let bound = 40
        var world = ReplicaWorld(relays: 2, compactionThreshold: 1 << 30, compactionEntries: bound)
        let session = SessionFixture()
        _ = world.admit(session, on: 0, connection: 1, create: true)
        _ = world.admit(session, on: 1, connection: 1)
        var named: [(relay: Int, entries: Int, bytes: Int)] = []
        var sequence: [UInt64] = [0, 0]
        func send(from relay: Int, at now: Int64) {
            sequence[relay] += 1
            world.send(.message(sequence: sequence[relay], recipients: .everyone, reliable: true, body: [1, 2, 3, 4, 5, 6, 7, 8]),
                       from: relay, connection: 1, at: now)
            world.pump(at: now)
            for index in 0..<2 where world.cores[index].takeClusterCompaction(session.id) {
                named.append((index, world.cores[index].clusterTailEntries(of: session.id) ?? 0,
                              world.cores[index].clusterTailBytes(of: session.id) ?? 0))
            }
        }
        // Far below the byte threshold: the entries alone name a relay, at their bound, once.
        for round in 0..<(3 * bound) { send(from: round % 2, at: 1_000 + Int64(round)) }
        #expect(named.count >= 2 && named.count <= 3, "\(named)")
        #expect(named.allSatisfy { $0.entries % bound == 0 }, "\(named)")
        #expect(Set(named.map(\.entries)).count == named.count, "one relay named at each multiple: \(named)")
        #expect(world.cores[0].clusterTailEntries(of: session.id) == world.cores[1].clusterTailEntries(of: session.id))

        // After a snapshot larger than the bound's entries weigh, the entries wait for its size.
        let stored = 10_000
        for index in 0..<2 {
            let state = try #require(world.cores[index].clusterSnapshot(of: session.id))
            _ = try world.cores[index].applyClusterSnapshot(state, of: session.id, stored: stored, restore: false, at: 2_000)
            #expect(world.cores[index].clusterTailEntries(of: session.id) == 0)
        }
        named.removeAll()
        for round in 0..<(10 * bound) where named.isEmpty { send(from: round % 2, at: 3_000 + Int64(round)) }
        let first = try #require(named.first, "no compaction after \(10 * bound) entries")
        #expect(first.entries % bound == 0 && first.entries > bound && first.bytes >= stored, "\(named)")
    }

    @Test("a relay that missed entries (a purge took them before it read them) takes the snapshot's state, keeps its own participants' connections and sends them what they missed, in sequence")
    func restoreOverALiveReplica() throws {
        var world = ReplicaWorld(relays: 2)
        let session = SessionFixture()
        _ = world.admit(session, on: 0, connection: 1, create: true)
        let ben = world.admit(session, on: 1, connection: 1)
        let cat = world.admit(session, on: 1, connection: 2)
        // Entries that reach the log and relay A, never relay B: the creator's messages, cat's leave.
        world.send(.message(sequence: 1, recipients: .everyone, reliable: true, body: Array("missed 1".utf8)), from: 0, connection: 1, at: 1_000)
        world.send(.message(sequence: 2, recipients: .everyone, reliable: true, body: Array("missed 2".utf8)), from: 0, connection: 1, at: 1_000)
        world.send(.leave(sequence: 1), from: 1, connection: 2, at: 1_000)
        let missed = world.cores[0].takeClusterOutput().entries + world.cores[1].takeClusterOutput().entries
        #expect(missed.count == 3)
        world.log += missed
        for entry in missed { world.record(world.cores[0].applyCluster(entry, at: 2_000), on: 0) }
        let state = try #require(world.cores[0].clusterSnapshot(of: session.id))
        let directives = try world.cores[1].applyClusterSnapshot(state, of: session.id, stored: state.count, restore: true, at: 3_000)
        world.record(directives, on: 1)
        #expect(Replica(world.cores[1], session.id) == Replica(world.cores[0], session.id))
        #expect(world.cores[1].sessions[session.id]?.participants[ben]?.connection == RelayConnectionID(1))
        #expect(world.cores[1].sessions[session.id]?.participants[cat] == nil)
        #expect(directives.contains { if case .close(RelayConnectionID(2)) = $0 { true } else { false } })
        // Ben's connection is sent what the missed entries gave him, in sequence after what it had.
        let sentBefore = world.sequenced(1, 1).compactMap(\.sequence)
        #expect(sentBefore == Array(1...UInt64(sentBefore.count)), "\(sentBefore)")
        #expect(world.deliveries(1, 1) == ["missed 1", "missed 2"])
        #expect(world.frames(1, 1).contains { if case let .participantLeft(_, id) = $0 { id == cat } else { false } })
        #expect(world.cores[1].accountedBytes == world.cores[1].sessions[session.id]?.accountedBytes)
        // The log goes on, and relay B serves ben as before.
        world.send(.message(sequence: 3, recipients: .everyone, reliable: true, body: Array("after".utf8)), from: 0, connection: 1, at: 4_000)
        world.pump(at: 4_000)
        #expect(world.deliveries(1, 1) == ["missed 1", "missed 2", "after"])
        let sent = world.sequenced(1, 1).compactMap(\.sequence)
        #expect(sent == Array(1...UInt64(sent.count)), "in sequence, none twice: \(sent)")
        #expect(Replica(world.cores[1], session.id) == Replica(world.cores[0], session.id))
        // And his outbox holds them, numbered as on every relay, until he acknowledges them.
        let pending = (world.cores[1].sessions[session.id]?.participants[ben]?.outbox.pending ?? []).compactMap { frame -> String? in
            if case let .delivery(_, _, _, body) = frame { String(decoding: body, as: UTF8.self) } else { nil }
        }
        #expect(pending.suffix(3) == ["missed 1", "missed 2", "after"])
    }

    @Test("the cap counts a session's snapshot and the entries after it: a snapshot near the cap leaves room for little more")
    func capCountsTheSnapshot() throws {
        let cap = 64 * 1024
        var world = ReplicaWorld(relays: 2, sessionLogLimit: cap, compactionThreshold: 8 * 1024)
        let session = SessionFixture()
        _ = world.admit(session, on: 0, connection: 1, create: true)
        _ = world.admit(session, on: 1, connection: 1)
        let body = [UInt8](repeating: 5, count: 4 * 1024)
        world.send(.message(sequence: 1, recipients: .everyone, reliable: true, body: body), from: 0, connection: 1, at: 1_000)
        world.pump(at: 1_000)
        // A snapshot (its messages taking most of the cap, as a large journal would) read by both.
        let state = try #require(world.cores[0].clusterSnapshot(of: session.id))
        let stored = cap - 6 * 1024
        for index in 0..<2 { _ = try world.cores[index].applyClusterSnapshot(state, of: session.id, stored: stored, restore: false, at: 2_000) }
        world.send(.message(sequence: 2, recipients: .everyone, reliable: true, body: body), from: 0, connection: 1, at: 3_000)
        world.pump(at: 3_000)
        #expect(!world.frames(0, 1).contains { if case .error = $0 { true } else { false } }, "one more fits")
        #expect(world.cores[1].clusterLogBytes(of: session.id) == stored + (world.log.last?.encodedSizeEstimate ?? 0))
        world.send(.message(sequence: 3, recipients: .everyone, reliable: true, body: body), from: 0, connection: 1, at: 4_000)
        #expect(world.frames(0, 1).contains { if case let .error(fault) = $0 { fault.code == .limitReached } else { false } }, "the next is over the cap")
    }

    @Test("a snapshot's parts: a large state splits under the message cap and reads back whole; bad bytes are refused, the replica untouched")
    func partsAndBadInput() throws {
        var world = ReplicaWorld(relays: 1)
        let session = SessionFixture()
        _ = world.admit(session, on: 0, connection: 1, create: true)
        let big = RelayAttachmentEntry(id: UUID(), owner: UUID(), size: 2_000_000, metadata: [])
        world.send(.attachmentAdd(sequence: 1, entry: big), from: 0, connection: 1, at: 1_000)
        var sent = 0
        var sequence: UInt64 = 1
        while sent < big.size {
            let count = min(RelayWireLimits.attachmentChunkSize, big.size - sent)
            sequence += 1
            world.send(.attachmentChunk(sequence: sequence, id: big.id, data: [UInt8](repeating: UInt8(sequence & 0xFF), count: count)[...]),
                       from: 0, connection: 1, at: 1_000)
            sent += count
        }
        world.pump(at: 2_000)
        #expect(world.cores[0].sessions[session.id]?.attachments[big.id]?.data.count == big.size)
        let state = try #require(world.cores[0].clusterSnapshot(of: session.id))
        let parts = ClusterLogCodec.parts(of: state, session: session.id, relay: 1, snapshot: 42, covers: 99)
        #expect(parts.count == 3 && parts.allSatisfy { $0.bytes.count <= ClusterLogCodec.snapshotPartBytes && $0.covers == 99 })
        let messages = parts.map { ClusterLogCodec.encode($0) }
        #expect(messages.allSatisfy { ClusterLogCodec.isSnapshotPart($0) && $0.count < 1024 * 1024 })
        // Read back by `STREAM.MSG.GET`, base64 in JSON with its headers, within the client's limit.
        #expect(messages.allSatisfy { ($0.count + 2) / 3 * 4 + 2_048 <= NATSServerInfo.defaultMaxPayload + 64 * 1024 })
        let read = try messages.map { try ClusterLogCodec.decodeSnapshotPart($0) }
        #expect(read == parts && read.flatMap(\.bytes) == state)
        // A batch of entries is not a part, and a part is not a batch.
        #expect(!ClusterLogCodec.isSnapshotPart(ClusterLogCodec.encode(world.log)))
        #expect(throws: ClusterLogError.self) { try ClusterLogCodec.decode(messages[0]) }

        // Cut short, or garbage: a clear error, and a replica that holds the session keeps it.
        var replica = Self.fresh(relay: 5)
        for entry in world.log { _ = replica.applyCluster(entry, at: 3_000) }
        let before = try #require(Replica(replica, session.id))
        for bad in [Array(state.dropLast()), [UInt8](repeating: 0xEE, count: 64), [], Array(state.prefix(100))] {
            #expect(throws: ClusterLogError.self) {
                _ = try replica.applyClusterSnapshot(bad, of: session.id, stored: 10, restore: true, at: 3_000)
            }
        }
        #expect(Replica(replica, session.id) == before)
        var truncated = messages[1]
        truncated.removeLast()
        #expect(throws: ClusterLogError.self) { try ClusterLogCodec.decodeSnapshotPart(truncated) }
    }
}

/// Compaction against a real nats-server: a session flooding its log keeps its stored bytes
/// bounded while participants on two relays hear everything once, in order; a relay that loads
/// it afterwards starts from the newest snapshot, replays only what follows, and serves a late
/// joiner the whole journal and history.
@Suite("Cluster compaction", .serialized, .timeLimit(.minutes(2)))
struct ClusterCompactionProcessTests {
    static let threshold = 128 * 1024

    @Test("a flooded session's log stays bounded; a relay loading it starts from the snapshot and a late joiner there gets everything")
    func floodIsCompacted() async throws {
        let nats = try startNATSNode()
        defer { nats.stop() }
        let first = try await InProcessRelay.start(nats.url, compactionThreshold: Self.threshold)
        let second = try await InProcessRelay.start(nats.url, compactionThreshold: Self.threshold)
        let session = UUID(), key = SigningKeyPair()
        let ana = try await Participant.join(session, key: key, "ana", relays: [first.endpoint], create: true)
        let ben = try await Participant.join(session, key: key, "ben", relays: [second.endpoint])
        let anaID = try #require(ana.link.welcome.participants.first { $0.displayName == "ana" }?.id)
        let attachment = UUID()
        let data = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }
        try await ana.link.addAttachment(id: attachment, metadata: [1, 2], data: data)

        // About 4 MiB of messages through the log (thirty times the threshold): most to nobody
        // (ana herself), every 25th to ben, ordered proposals among them, and ben's messages to
        // ana from the other relay at the same time.
        let body = [UInt8](repeating: 0x42, count: 2_048)
        let rounds = 2_000
        var toBen = 0, proposals = 0, fromBen = 0
        var flooded = 0
        for index in 0..<rounds {
            if index % 40 == 0 {
                try ana.link.sendOrdered("p\(proposals)".bytes)
                proposals += 1
            }
            if index % 25 == 0 {
                try ana.link.send("m\(toBen)".bytes, to: .everyone, reliable: true)
                toBen += 1
            } else {
                try ana.link.send(body, to: .only([anaID]), reliable: true)
                flooded += body.count
            }
            if index % 10 == 0 {
                try ben.link.send("b\(fromBen)".bytes, to: .everyone, reliable: true)
                fromBen += 1
            }
            if index % 100 == 99 {
                let expected = "m\(toBen - 1)"
                #expect(await ben.wait(20) { $0.messages(reliable: true).last == expected }, "ben lags at \(index)")
            }
        }
        let toBenExpected = (0..<toBen).map { "m\($0)" }
        let fromBenExpected = (0..<fromBen).map { "b\($0)" }
        #expect(await ben.wait(20) { $0.messages(reliable: true).count >= toBen })
        #expect(await ana.wait(20) { $0.messages(reliable: true).count >= fromBen && $0.ordered.count >= proposals })
        // Everything once, in order, on both relays, while they compacted.
        #expect(ben.messages(reliable: true) == toBenExpected)
        #expect(ana.messages(reliable: true) == fromBenExpected)
        #expect(await ben.wait { $0.ordered.count >= proposals })
        #expect(ben.ordered.map { String(decoding: $0.body, as: UTF8.self) } == (0..<proposals).map { "p\($0)" })
        #expect(await ana.wait { _ in first.cluster.compactions + second.cluster.compactions >= 10 },
                "only \(first.cluster.compactions + second.cluster.compactions) compactions")

        // What the stream holds (this session alone): bounded by the live state (the 200 KB
        // attachment, the outboxes, the history) and the entries since the last snapshot, not by
        // the flood; everything before the newest snapshot purged.
        let connection = try await NATSConnection.connect(to: try NATSURL(parsing: nats.url))
        let jetStream = JetStream(connection: connection)
        let stream = ClusterRelay.stream(for: session)
        var state = try await jetStream.streamInfo(stream).state
        let deadline = ContinuousClock.now + .seconds(5)
        while state.bytes > 1_200_000, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            state = try await jetStream.streamInfo(stream).state
        }
        #expect(flooded > 3_500_000)
        #expect(state.bytes <= 1_200_000, "the stream holds \(state.bytes) bytes after a flood of \(flooded)")
        #expect(state.firstSequence > 1 && state.messages < state.lastSequence / 4,
                "\(state.messages) messages kept of \(state.lastSequence)")
        await connection.close()

        // A third relay, started now: a late joiner there makes it load the session.
        let third = try await InProcessRelay.start(nats.url, compactionThreshold: Self.threshold)
        let cat = try await Participant.join(session, key: key, "cat", relays: [third.endpoint])
        let report = try #require(third.cluster.loadReport(of: session))
        #expect(report.snapshots == 1, "\(report)")
        // Only what followed the snapshot: at most the threshold's worth of entries (each entry
        // here takes at least 160 bytes), against the thousands in the flood.
        #expect(report.entries <= Self.threshold / 160 + 64 && report.messages <= report.entries, "\(report)")
        #expect(cat.link.welcome.attachments.map(\.id) == [attachment])
        #expect(try await cat.link.loadAttachment(id: attachment) == data)
        #expect(cat.ordered.map { String(decoding: $0.body, as: UTF8.self) } == (0..<proposals).map { "p\($0)" })
        #expect(Set(cat.link.welcome.participants.map(\.displayName)) == ["ana", "ben", "cat"])
        // The loaded replica goes on with the others.
        try cat.link.send("from cat".bytes, to: .everyone, reliable: true)
        try ana.link.send("to cat".bytes, to: .everyone, reliable: true)
        #expect(await ana.wait { $0.messages(reliable: true).last == "from cat" })
        #expect(await ben.wait { $0.messages(reliable: true).suffix(2) == ["to cat", "from cat"] || $0.messages(reliable: true).suffix(2) == ["from cat", "to cat"] })
        #expect(await cat.wait { $0.messages(reliable: true) == ["to cat"] })
        await third.stop()
        await first.stop()
        await second.stop()
    }

    @Test("the sweep for ended sessions reads a compacted log as a relay does: a live session that starts with a snapshot is left, an ended one purged")
    func sweepReadsSnapshots() async throws {
        let nats = try startNATSNode()
        defer { nats.stop() }
        let first = try await InProcessRelay.start(nats.url, purgeDelay: .seconds(3600), sweepInterval: nil, compactionThreshold: 32 * 1024)
        let live = UUID(), key = SigningKeyPair()
        var ended = UUID()
        while ClusterRelay.stream(for: ended) != ClusterRelay.stream(for: live) { ended = UUID() }
        let ana = try await Participant.join(live, key: key, "ana", relays: [first.endpoint], create: true)
        let ben = try await Participant.join(live, key: key, "ben", relays: [first.endpoint])
        let cat = try await Participant.join(ended, key: key, "cat", relays: [first.endpoint], create: true)
        let body = [UInt8](repeating: 0x11, count: 1_024)
        for participant in [ana, cat] {
            let own = try #require(participant.link.welcome.participants.last?.id)
            for _ in 0..<120 { try participant.link.send(body, to: .only([own]), reliable: true) }
            try participant.link.sendOrdered("kept".bytes)
            #expect(await participant.wait { $0.ordered.count == 1 })
        }
        #expect(await ana.wait { _ in first.cluster.compactions >= 2 }, "\(first.cluster.compactions) compactions")
        await cat.link.end(reason: "done")
        #expect(await ana.wait { _ in first.cluster.pendingPurges == 1 }, "the end reached the log")

        // Both logs start with a snapshot once the purges behind them are done.
        let connection = try await NATSConnection.connect(to: try NATSURL(parsing: nats.url))
        let jetStream = JetStream(connection: connection)
        let stream = ClusterRelay.stream(for: live)
        func startsWithSnapshot(_ session: UUID) async throws -> Bool {
            let head = try await jetStream.nextMessage(stream: stream, subject: ClusterRelay.subject(for: session), from: 1)
            return ClusterLogCodec.isSnapshotPart(head.payload)
        }
        func bothStartWithSnapshots() async throws -> Bool {
            let first = try await startsWithSnapshot(live)
            let second = try await startsWithSnapshot(ended)
            return first && second
        }
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline, try await !bothStartWithSnapshots() {
            try await Task.sleep(for: .milliseconds(100))
        }
        let compacted = try await bothStartWithSnapshots()
        #expect(compacted)
        await first.stop()

        // Another relay's sweep, told it is a minute later: the ended session's subject goes, the
        // live one stays, and a joiner there gets its history from the snapshot.
        let sweeper = try await InProcessRelay.start(nats.url, purgeDelay: .seconds(30), sweepInterval: nil)
        #expect(await sweeper.cluster.sweepEndedSessions(now: Date().addingTimeInterval(60)) == [ended])
        let liveKept = try await startsWithSnapshot(live)
        #expect(liveKept)
        let dan = try await Participant.join(live, key: key, "dan", relays: [sweeper.endpoint])
        #expect(dan.link.welcome.orderedHistory.map { String(decoding: $0.body, as: UTF8.self) } == ["kept"])
        #expect(Set(dan.link.welcome.participants.map(\.displayName)).isSuperset(of: ["ana", "ben", "dan"]))
        _ = ben
        await connection.close()
        await sweeper.stop()
    }

    @Test("a session whose state takes several messages: the log starts with its snapshot's parts, and a relay loading it gets the journal whole")
    func snapshotInParts() async throws {
        let nats = try startNATSNode()
        defer { nats.stop() }
        let first = try await InProcessRelay.start(nats.url, compactionThreshold: Self.threshold)
        let second = try await InProcessRelay.start(nats.url, compactionThreshold: Self.threshold)
        let session = UUID(), key = SigningKeyPair()
        let ana = try await Participant.join(session, key: key, "ana", relays: [first.endpoint], create: true)
        let ben = try await Participant.join(session, key: key, "ben", relays: [second.endpoint])
        let anaID = try #require(ana.link.welcome.participants.first { $0.displayName == "ana" }?.id)
        // A journal of 1.5 MB: every snapshot takes two messages.
        let attachment = UUID()
        let data = (0..<1_500_000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 11) }
        try await ana.link.addAttachment(id: attachment, metadata: [], data: data)
        // Twice as much again through the log, with ben's messages from the other relay meanwhile.
        let body = [UInt8](repeating: 0x24, count: 2_048)
        var fromBen = 0
        for index in 0..<1_600 {
            try ana.link.send(body, to: .only([anaID]), reliable: true)
            if index % 10 == 0 {
                try ben.link.send("b\(fromBen)".bytes, to: .everyone, reliable: true)
                fromBen += 1
            }
            if index % 200 == 199 {
                try ana.link.sendOrdered("p\(index)".bytes)
                let heard = (index + 1) / 200
                #expect(await ana.wait(20) { $0.ordered.count >= heard }, "ana lags at \(index)")
            }
        }
        #expect(await ana.wait(20) { $0.messages(reliable: true).count >= fromBen })
        #expect(ana.messages(reliable: true) == (0..<fromBen).map { "b\($0)" })
        #expect(await ana.wait { _ in first.cluster.compactions + second.cluster.compactions >= 1 })

        // Once the purge behind the newest snapshot is done, the log starts with its first part.
        let connection = try await NATSConnection.connect(to: try NATSURL(parsing: nats.url))
        let jetStream = JetStream(connection: connection)
        let stream = ClusterRelay.stream(for: session), subject = ClusterRelay.subject(for: session)
        var head: ClusterSnapshotPart?
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            let message = try await jetStream.nextMessage(stream: stream, subject: subject, from: 1)
            head = try? ClusterLogCodec.decodeSnapshotPart(message.payload)
            if head != nil { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        let part = try #require(head, "the log does not start with a snapshot")
        #expect(part.index == 0 && part.count == 2 && part.session == session)
        let stored = try await jetStream.streamInfo(stream).state.bytes
        #expect(stored < 4_500_000, "the stream holds \(stored) bytes")
        await connection.close()

        // A relay loading it: one snapshot of two parts, then the few entries after it.
        let third = try await InProcessRelay.start(nats.url, compactionThreshold: Self.threshold)
        let cat = try await Participant.join(session, key: key, "cat", relays: [third.endpoint])
        let report = try #require(third.cluster.loadReport(of: session))
        #expect(report.snapshots == 1 && report.snapshotBytes > ClusterLogCodec.snapshotPartBytes, "\(report)")
        #expect(cat.link.welcome.attachments.map(\.id) == [attachment])
        #expect(try await cat.link.loadAttachment(id: attachment) == data)
        #expect(cat.ordered.map { String(decoding: $0.body, as: UTF8.self) } == (0..<8).map { "p\($0 * 200 + 199)" })
        await third.stop()
        await first.stop()
        await second.stop()
    }
}
