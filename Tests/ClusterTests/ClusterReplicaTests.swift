import Foundation
import Testing
@testable import TandemCluster
import TandemNATS
@testable import TandemNet
import TandemWire

/// The replica on virtual time: relay cores in cluster mode fed one log. What JetStream does for
/// real (one order for the subject) is the `ReplicaWorld`'s array; what each relay sends its own
/// connections is compared.
@Suite("Cluster replica")
struct ClusterReplicaTests {
    @Test("two relays fed the same log give the same order numbers, stamps and sequence numbers to everyone")
    func sameLogSameFrames() throws {
        var world = ReplicaWorld(relays: 2)
        let session = SessionFixture()
        let host = world.admit(session, on: 0, connection: 1, create: true)
        let far = world.admit(session, on: 1, connection: 1)
        let near = world.admit(session, on: 0, connection: 2)
        #expect(world.welcomes(0, 1).count == 1 && world.welcomes(1, 1).count == 1 && world.welcomes(0, 2).count == 1)
        // Proposals from both relays, interleaved in the log as the relays submit them (relay A's
        // first in each round here).
        world.send(.proposal(sequence: 1, body: Array("h1".utf8)), from: 0, connection: 1, at: 1_000)
        world.send(.proposal(sequence: 1, body: Array("f1".utf8)), from: 1, connection: 1, at: 1_000)
        world.pump(at: 2_000)
        world.send(.proposal(sequence: 2, body: Array("f2".utf8)), from: 1, connection: 1, at: 3_000)
        world.send(.proposal(sequence: 1, body: Array("n1".utf8)), from: 0, connection: 2, at: 3_000)
        world.send(.message(sequence: 2, recipients: .everyone, reliable: true, body: Array("m".utf8)), from: 0, connection: 1, at: 3_000)
        world.pump(at: 4_000)

        let orders = [world.ordered(0, 1), world.ordered(1, 1), world.ordered(0, 2)]
        #expect(orders[0].map(\.order) == [1, 2, 3, 4])
        #expect(orders[0].map { String(decoding: $0.body, as: UTF8.self) } == ["h1", "f1", "n1", "f2"])
        // The same entries, stamps and all, on every relay.
        #expect(orders[1] == orders[0] && orders[2] == orders[0])
        // The message reached the participants on both relays, once.
        #expect(world.deliveries(1, 1) == ["m"] && world.deliveries(0, 2) == ["m"] && world.deliveries(0, 1).isEmpty)
        // Each participant's outbox is numbered alike on both relays.
        for id in [host, far, near] {
            let outboxes = world.cores.map { Array($0.sessions[session.id]?.participants[id]?.outbox.pending ?? []) }
            #expect(!outboxes[0].isEmpty && outboxes[0] == outboxes[1])
        }
        // The effective instants never precede each other and cover the commit margin.
        #expect(zip(orders[0], orders[0].dropFirst()).allSatisfy { $0.effectiveInstant.nanoseconds <= $1.effectiveInstant.nanoseconds })
        #expect(orders[0].allSatisfy { $0.effectiveInstant.nanoseconds - $0.orderedInstant.nanoseconds >= 10_000_000 })
    }

    @Test("a participant of a relay that died resumes on another and gets exactly what followed what it had, nothing twice")
    func resumeOnAnotherRelay() throws {
        var world = ReplicaWorld(relays: 2)
        let session = SessionFixture()
        _ = world.admit(session, on: 0, connection: 1, create: true)
        let far = world.admit(session, on: 1, connection: 1)
        for index in 1...5 {
            world.send(.proposal(sequence: UInt64(index), body: Array("h\(index)".utf8)), from: 0, connection: 1, at: Int64(index) * 1_000)
        }
        world.pump(at: 10_000)
        let seenOnB = world.sequenced(1, 1)
        #expect(seenOnB.count >= 5)
        // The participant had handled through its third frame when relay B died.
        let had = seenOnB[2].sequence!
        // Its frame 1 had reached the log; frame 2 was still on its way and is lost with relay B.
        world.send(.message(sequence: 1, recipients: .everyone, reliable: true, body: Array("before".utf8)), from: 1, connection: 1, at: 11_000)
        world.pump(at: 11_500)
        world.send(.message(sequence: 2, recipients: .everyone, reliable: true, body: Array("lost".utf8)), from: 1, connection: 1, at: 12_000)
        _ = world.cores[1].takeClusterOutput()
        world.cores.removeLast()
        world.outputs.removeLast()

        // It resumes on relay A.
        let welcome = world.resume(session, far, on: 0, connection: 9, received: had)
        guard case let .welcome(frame)? = welcome.first else { Issue.record("no welcome: \(welcome)"); return }
        #expect(frame.resumed && frame.received == 1)
        let replayed = welcome.dropFirst().compactMap(\.sequence)
        #expect(replayed == Array(seenOnB.compactMap(\.sequence).filter { $0 > had }))
        // It sends again what relay A did not acknowledge: frame 1 once more, then frame 2.
        world.send(.message(sequence: 1, recipients: .everyone, reliable: true, body: Array("before".utf8)), from: 0, connection: 9, at: 13_000)
        world.send(.message(sequence: 2, recipients: .everyone, reliable: true, body: Array("lost".utf8)), from: 0, connection: 9, at: 13_000)
        world.pump(at: 14_000)
        #expect(world.deliveries(0, 1) == ["before", "lost"])
    }

    @Test("two relays creating one session at once: the second creation joins it; another verifier is refused")
    func racingCreations() throws {
        var world = ReplicaWorld(relays: 2)
        let session = SessionFixture()
        world.startAdmission(session, on: 0, connection: 1, create: true)
        world.startAdmission(session, on: 1, connection: 1, create: true)
        let impostor = SessionFixture(id: session.id)
        world.startAdmission(impostor, on: 1, connection: 2, create: true)
        world.pump(at: 1_000)
        guard let first = world.welcomes(0, 1).first, let second = world.welcomes(1, 1).first else {
            Issue.record("both creators should be welcomed: \(world.frames(0, 1)) \(world.frames(1, 1))")
            return
        }
        #expect(first.created && !second.created && second.participants.count == 2)
        #expect(world.frames(1, 2).contains { if case let .refusal(fault) = $0 { fault.code == .wrongSecret } else { false } })
    }

    @Test("the participants of a relay gone silent are away, then depart, unless they resume; heartbeats keep them")
    func silentRelay() throws {
        var world = ReplicaWorld(relays: 2)
        let session = SessionFixture()
        _ = world.admit(session, on: 0, connection: 1, create: true)
        let far = world.admit(session, on: 1, connection: 1)
        // Relay B says it is alive: nothing happens.
        world.cores[0].onClusterHeartbeat(2, at: 2_500_000_000)
        world.record(world.cores[0].onTick(at: 4_000_000_000), on: 0)
        world.pump(at: 4_000_000_000)
        #expect(!world.frames(0, 1).contains { if case .participantAway = $0 { true } else { false } })
        // Then it falls silent (killed): after 3 s its participant is away, 3 s later gone.
        world.cores.removeLast()
        world.outputs.removeLast()
        world.record(world.cores[0].onTick(at: 6_000_000_000), on: 0)
        world.pump(at: 6_000_000_000)
        #expect(world.frames(0, 1).contains { if case .participantAway(_, far, true) = $0 { true } else { false } })
        #expect(!world.frames(0, 1).contains { if case .participantLeft = $0 { true } else { false } })
        world.record(world.cores[0].onTick(at: 9_100_000_000), on: 0)
        world.pump(at: 9_100_000_000)
        #expect(world.frames(0, 1).contains { if case .participantLeft(_, far) = $0 { true } else { false } })
        #expect(world.cores[0].participants(of: session.id).count == 1)
    }

    @Test("a participant its own relay drops (a protocol violation) is removed on every relay, through the log, once")
    func droppedEverywhere() throws {
        var world = ReplicaWorld(relays: 2)
        let session = SessionFixture()
        _ = world.admit(session, on: 0, connection: 1, create: true)
        let far = world.admit(session, on: 1, connection: 1)
        // Sequence 5 after nothing: relay B drops it at once and submits its removal.
        world.send(.message(sequence: 5, recipients: .everyone, reliable: true, body: []), from: 1, connection: 1, at: 1_000)
        #expect(world.frames(1, 1).contains { if case let .error(fault) = $0 { fault.code == .protocolViolation } else { false } })
        #expect(world.cores[0].participants(of: session.id).count == 2)
        world.pump(at: 2_000)
        for core in world.cores { #expect(core.participants(of: session.id).count == 1) }
        #expect(world.frames(0, 1).filter { if case .participantLeft(_, far) = $0 { true } else { false } }.count == 1)
        // Its relay's next tick submits nothing more.
        world.record(world.cores[1].onTick(at: 3_000_000_000), on: 1)
        #expect(world.cores[1].takeClusterOutput().entries.allSatisfy { if case .departed = $0.event { false } else { true } })
    }

    /// SECURITY.md: nobody is dropped for the footprint alone. A relay whose measured footprint
    /// (`footprintBytes`, allocator slack after a peak) is over its limit while what it accounts
    /// is under keeps its uploaders: the upload goes through the log as any other. Over the
    /// accounted budget, the uploader is dropped as before.
    @Test("an upload on a relay over its footprint alone drops nobody; over its accounted budget, the uploader is dropped")
    func uploadOverFootprintAlone() throws {
        var world = ReplicaWorld(relays: 2)
        let session = SessionFixture()
        _ = world.admit(session, on: 0, connection: 1, create: true)
        _ = world.admit(session, on: 1, connection: 1)
        let limit = world.cores[0].configuration.memoryLimit
        world.cores[0].footprintBytes = limit
        #expect(world.cores[0].budgetBytes < limit)
        let entry = RelayAttachmentEntry(id: UUID(), owner: UUID(), size: 10, metadata: [])
        world.send(.attachmentAdd(sequence: 1, entry: entry), from: 0, connection: 1, at: 1_000)
        world.send(.attachmentChunk(sequence: 2, id: entry.id, data: [UInt8](repeating: 7, count: 10)[...]), from: 0, connection: 1, at: 1_000)
        world.pump(at: 2_000)
        #expect(!world.frames(0, 1).contains { if case .error = $0 { true } else { false } }, "the uploader is not dropped")
        for core in world.cores {
            #expect(core.participants(of: session.id).count == 2)
            #expect(core.sessions[session.id]?.attachments[entry.id] != nil, "the upload is applied on every relay")
        }
        #expect(world.frames(0, 1).contains { if case .outcome(_, 1, nil) = $0 { true } else { false } })

        // What the relay accounts at its limit: the uploader of the next attachment is dropped.
        world.cores[0].shellBytes = limit
        let second = RelayAttachmentEntry(id: UUID(), owner: UUID(), size: 10, metadata: [])
        world.send(.attachmentAdd(sequence: 3, entry: second), from: 0, connection: 1, at: 3_000)
        #expect(world.frames(0, 1).contains { if case let .error(fault) = $0 { fault.code == .limitReached } else { false } })
    }

    @Test("NATS unreachable: nobody new is admitted, with the fault unavailable; back, they are")
    func unavailable() throws {
        var world = ReplicaWorld(relays: 1)
        let session = SessionFixture()
        world.record(world.cores[0].setClusterAvailable(false, at: 0), on: 0)
        world.startAdmission(session, on: 0, connection: 1, create: true)
        world.pump(at: 1_000)
        #expect(world.frames(0, 1).contains { if case let .refusal(fault) = $0 { fault.code == .unavailable } else { false } })
        world.record(world.cores[0].setClusterAvailable(true, at: 0), on: 0)
        world.startAdmission(session, on: 0, connection: 2, create: true)
        world.pump(at: 2_000)
        #expect(world.welcomes(0, 2).count == 1)
    }

    @Test("log entries survive their encoding, frames and stamps unchanged")
    func codecRoundTrip() throws {
        let session = UUID()
        let key = SigningKeyPair()
        let participant = RelayParticipantEntry(id: RelayAuthenticator.participantID(for: key.publicKey), publicKey: key.publicKey,
                                                displayName: "p", presence: [1, 2, 3])
        let entries: [ClusterLogEntry] = [
            .init(session: session, relay: 7, connection: 3, event: .joined(participant: participant, token: [9, 9], verifier: [1], activity: [2])),
            .init(session: session, relay: 7, connection: 3, event: .joined(participant: participant, token: [9], verifier: nil, activity: [])),
            .init(session: session, relay: 7, connection: 3, event: .frame(participant: participant.id,
                                                                           frame: .proposal(sequence: 4, retention: .recent(count: 5), body: [0xFF]),
                                                                           orderedAt: -5, effectiveAt: .max)),
            .init(session: session, relay: 7, connection: 3, event: .resumed(participant: participant.id, received: 12)),
            .init(session: session, relay: 7, connection: 3, event: .away(participant: participant.id)),
            .init(session: session, relay: 7, connection: 3, event: .departed(participant: participant.id)),
            .init(session: session, relay: 7, connection: 3, event: .cursor(participant: participant.id, through: 99)),
        ]
        #expect(try ClusterLogCodec.decode(ClusterLogCodec.encode(entries)) == entries)
        let datagram = ClusterDatagram(session: session, relay: 1, sender: participant.id, recipients: .only([participant.id]), body: [1, 2])
        #expect(try ClusterLogCodec.decodeDatagram(ClusterLogCodec.encode(datagram)) == datagram)
        var truncated = ClusterLogCodec.encode(entries)
        truncated.removeLast()
        #expect(throws: ClusterLogError.self) { try ClusterLogCodec.decode(truncated) }
    }
}

/// A session's identity and key.
struct SessionFixture {
    var id = UUID()
    var key = SigningKeyPair()
}

/// Relay cores in cluster mode and the one log they share: `pump` appends what each submitted,
/// in relay order, and applies every new entry to every core, in log order.
struct ReplicaWorld {
    var cores: [RelayCore]
    var log: [ClusterLogEntry] = []
    /// The frames each relay sent each of its connections so far.
    var outputs: [[UInt64: [RelayFrame]]]
    private var identities: [UUID: SigningKeyPair] = [:]
    private var hellos: [Int: [UInt64: (SessionFixture, SigningKeyPair, Bool)]] = [:]

    init(relays: Int, sessionLogLimit: Int = RelayCore.defaultClusterSessionLogLimit, compactionThreshold: Int? = nil,
         compactionEntries: Int? = nil) {
        cores = (0..<relays).map { index in
            var core = RelayCore(cookieKey: [UInt8](repeating: 1, count: 32))
            core.enableCluster(relay: UInt64(index + 1), sessionLogLimit: sessionLogLimit, compactionThreshold: compactionThreshold,
                               compactionEntries: compactionEntries)
            return core
        }
        outputs = Array(repeating: [:], count: relays)
    }

    mutating func record(_ directives: [RelayDirective], on relay: Int) {
        for case let .send(connection, frame) in directives { outputs[relay][connection.value, default: []].append(frame) }
    }

    /// Opens `connection` on `relay` and sends its hello; the rest follows as the log is pumped.
    mutating func startAdmission(_ session: SessionFixture, on relay: Int, connection: UInt64, create: Bool = false,
                                 resume: (UUID, UInt64)? = nil, identity chosen: SigningKeyPair? = nil, ticket: [UInt8]? = nil) {
        let identity = resume.flatMap { identities[$0.0] } ?? chosen ?? SigningKeyPair()
        let id = RelayAuthenticator.participantID(for: identity.publicKey)
        identities[id] = identity
        let entropy = [UInt8](repeating: UInt8(truncatingIfNeeded: connection &+ UInt64(relay) &* 64), count: RelayCore.entropyLength)
        record(cores[relay].onOpen(RelayConnectionID(connection), entropy: entropy, at: 0), on: relay)
        let hello = RelayHello(sessionID: session.id, participant: RelayParticipantEntry(id: id, publicKey: identity.publicKey, displayName: "p"),
                               create: create, activity: [], resume: resume != nil, received: resume?.1 ?? 0, ticket: ticket)
        hellos[relay, default: [:]][connection] = (session, identity, false)
        record(cores[relay].onFrame(.hello(hello), from: RelayConnectionID(connection), at: 0), on: relay)
        answerChallenges(at: 0)
    }

    /// Answers every challenge not yet answered.
    private mutating func answerChallenges(at now: Int64) {
        for relay in cores.indices {
            for (connection, pending) in hellos[relay] ?? [:] where !pending.2 {
                guard let frames = outputs[relay][connection],
                      case let .challenge(nonce, exists)? = frames.last(where: { if case .challenge = $0 { true } else { false } }) else { continue }
                hellos[relay]?[connection]?.2 = true
                let (session, identity, _) = pending
                let answer = RelayAuthenticator.answer(nonce: nonce, sessionExists: exists, sessionID: session.id, sessionKey: session.key,
                                                       identity: identity, participant: RelayAuthenticator.participantID(for: identity.publicKey))
                record(cores[relay].onFrame(answer, from: RelayConnectionID(connection), at: now), on: relay)
            }
        }
    }

    /// The key of a participant admitted here.
    func identity(of participant: UUID) -> SigningKeyPair? { identities[participant] }

    /// Admits a participant on `relay` (with `identity`, or a fresh one, and `ticket`); its identity.
    mutating func admit(_ session: SessionFixture, on relay: Int, connection: UInt64, create: Bool = false,
                        identity: SigningKeyPair? = nil, ticket: [UInt8]? = nil) -> UUID {
        startAdmission(session, on: relay, connection: connection, create: create, identity: identity, ticket: ticket)
        pump(at: 0)
        return cores[relay].sessions[session.id]?.participants.first { $0.value.connection?.value == connection }?.key ?? UUID()
    }

    /// Resumes `participant` on `relay`; the frames of its resumption.
    mutating func resume(_ session: SessionFixture, _ participant: UUID, on relay: Int, connection: UInt64, received: UInt64) -> [RelayFrame] {
        startAdmission(session, on: relay, connection: connection, resume: (participant, received))
        pump(at: 0)
        return (outputs[relay][connection] ?? []).filter { frame in
            switch frame { case .challenge, .ping: false; default: true }
        }
    }

    mutating func send(_ frame: RelayFrame, from relay: Int, connection: UInt64, at now: Int64) {
        record(cores[relay].onFrame(frame, from: RelayConnectionID(connection), at: now), on: relay)
    }

    /// Until nothing more is submitted: sessions asked for are loaded (the log is applied to
    /// every core as it grows, so each is current), submissions appended, new entries applied.
    mutating func pump(at now: Int64) {
        for _ in 0..<16 {
            var fresh: [ClusterLogEntry] = []
            for relay in cores.indices {
                let output = cores[relay].takeClusterOutput()
                fresh += output.entries
                for session in output.follow { record(cores[relay].onClusterSessionLoaded(session, at: now), on: relay) }
            }
            answerChallenges(at: now)
            for relay in cores.indices { fresh += cores[relay].takeClusterOutput().entries }
            guard !fresh.isEmpty else { return }
            log += fresh
            for entry in fresh {
                for relay in cores.indices { record(cores[relay].applyCluster(entry, at: now), on: relay) }
            }
            answerChallenges(at: now)
        }
    }

    func frames(_ relay: Int, _ connection: UInt64) -> [RelayFrame] { outputs[relay][connection] ?? [] }

    func welcomes(_ relay: Int, _ connection: UInt64) -> [RelayWelcomeFrame] {
        frames(relay, connection).compactMap { if case let .welcome(welcome) = $0 { welcome } else { nil } }
    }

    func ordered(_ relay: Int, _ connection: UInt64) -> [RelayOrderedEntry] {
        frames(relay, connection).compactMap { if case let .ordered(_, entry) = $0 { entry } else { nil } }
    }

    func deliveries(_ relay: Int, _ connection: UInt64) -> [String] {
        frames(relay, connection).compactMap { if case let .delivery(_, _, _, body) = $0 { String(decoding: body, as: UTF8.self) } else { nil } }
    }

    func sequenced(_ relay: Int, _ connection: UInt64) -> [RelayFrame] { frames(relay, connection).filter { $0.sequence != nil } }
}
