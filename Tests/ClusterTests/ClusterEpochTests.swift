import Foundation
import Testing
@testable import TandemCluster
import TandemNATS
@testable import TandemNet
import TandemWire

/// A removal on a cluster, on virtual time: an operator's signed epoch statement goes through the
/// session's log and every relay applies it alike, so that the one removed is dropped by its own
/// relay and every relay admits by the new verifier alone; grants and claims too; a snapshot
/// carries the epoch and the operator keys; expiring invites are checked on every relay.
@Suite("Cluster epochs")
struct ClusterEpochTests {
    @Test("every relay applies the creator's removal alike, and the old secret stops admitting on each")
    func removalEverywhere() throws {
        var world = ReplicaWorld(relays: 2)
        let session = SessionFixture()
        let host = world.admit(session, on: 0, connection: 1, create: true)
        let ben = world.admit(session, on: 1, connection: 1)
        let cy = world.admit(session, on: 0, connection: 2)
        let next = SessionFixture(id: session.id, key: SigningKeyPair())

        // Ben, no operator, sends one: it is ordered in the log and changes nothing.
        world.send(world.statement(session.id, .epoch(1, verifier: next.key.publicKey, removed: host), by: ben, counter: 1, sequence: 1), from: 1, connection: 1, at: 1_000)
        world.pump(at: 1_500)
        #expect(world.cores.allSatisfy { $0.sessions[session.id]?.epoch == 0 })

        world.send(world.statement(session.id, .epoch(1, verifier: next.key.publicKey, removed: ben), by: host, counter: 1, sequence: 1), from: 0, connection: 1, at: 2_000)
        world.pump(at: 3_000)
        for core in world.cores {
            let state = try #require(core.sessions[session.id])
            #expect(state.epoch == 1 && state.key == next.key.publicKey && state.removed == [ben])
            #expect(state.order == [host, cy])
        }
        #expect(world.frames(1, 1).contains { if case let .error(fault) = $0 { fault.code == .removed } else { false } })
        #expect(world.frames(0, 2).contains { if case .participantLeft(_, ben) = $0 { true } else { false } })

        // On either relay, the old secret is refused and the new admits.
        _ = world.admit(session, on: 1, connection: 2)
        #expect(world.frames(1, 2).contains { if case let .refusal(fault) = $0 { fault.code == .wrongSecret } else { false } })
        _ = world.admit(next, on: 1, connection: 3)
        #expect(world.welcomes(1, 3).count == 1)

        // A snapshot carries the epoch, the earlier verifiers, the creator's key and who was removed.
        let state = try #require(world.cores[0].sessions[session.id])
        let decoded = try ClusterSessionSnapshot.decode(ClusterSessionSnapshot.encode(state, homes: [:]), session: session.id).state
        #expect(decoded.epoch == 1 && decoded.key == state.key && decoded.formerKeys == [session.key.publicKey])
        #expect(decoded.operatorKeys == state.operatorKeys && decoded.operatorKeys.count == 1 && decoded.removed == [ben])
    }

    @Test("an operator the creator granted removes someone on another relay after the creator left, alike everywhere; a snapshot keeps the keys")
    func grantedOperatorAfterTheCreatorLeft() throws {
        var world = ReplicaWorld(relays: 2)
        let session = SessionFixture()
        let host = world.admit(session, on: 0, connection: 1, create: true)
        let ben = world.admit(session, on: 1, connection: 1)
        let cy = world.admit(session, on: 0, connection: 2)
        let next = SessionFixture(id: session.id, key: SigningKeyPair())
        let bensKey = try #require(world.identity(of: ben)).publicKey
        world.send(world.statement(session.id, .grant(publicKey: bensKey), by: host, counter: 1, sequence: 1), from: 0, connection: 1, at: 1_000)
        world.send(.leave(sequence: 2), from: 0, connection: 1, at: 1_000)
        world.pump(at: 1_500)
        for core in world.cores {
            let state = try #require(core.sessions[session.id])
            #expect(state.operatorKeys.count == 2 && state.operatorKeys.last == bensKey && state.order == [ben, cy])
        }
        // Carried on Cy's connection, on the other relay: the signature is what counts.
        world.send(world.statement(session.id, .epoch(1, verifier: next.key.publicKey, removed: cy), by: ben, counter: 2, sequence: 1), from: 0, connection: 2, at: 2_000)
        world.pump(at: 3_000)
        for core in world.cores {
            let state = try #require(core.sessions[session.id])
            #expect(state.epoch == 1 && state.key == next.key.publicKey && state.removed == [cy] && state.order == [ben])
        }
        let state = try #require(world.cores[1].sessions[session.id])
        let decoded = try ClusterSessionSnapshot.decode(ClusterSessionSnapshot.encode(state, homes: [:]), session: session.id).state
        #expect(decoded.operatorKeys == state.operatorKeys && decoded.ticketKeys == state.ticketKeys)
        #expect(decoded.authorityCounters == state.authorityCounters && decoded.authorityCounters[bensKey] == 2)
    }

    @Test("once the creator says only operators may end, a guest's end on another relay ends nothing anywhere; a snapshot keeps the rule")
    func endingByOperatorsOnEveryRelay() throws {
        var world = ReplicaWorld(relays: 2)
        let session = SessionFixture()
        let host = world.admit(session, on: 0, connection: 1, create: true)
        let ben = world.admit(session, on: 1, connection: 1)
        world.send(world.statement(session.id, .ending(operatorsOnly: true), by: host, counter: 1, sequence: 1), from: 0, connection: 1, at: 1_000)
        world.pump(at: 1_500)
        for core in world.cores { #expect(core.sessions[session.id]?.endingByOperators == true) }
        world.send(.end(sequence: 1, reason: "mine"), from: 1, connection: 1, at: 2_000)
        world.pump(at: 3_000)
        #expect(world.frames(1, 1).contains { if case let .error(fault) = $0 { fault.code == .notPermitted } else { false } })
        for core in world.cores {
            let state = try #require(core.sessions[session.id], "the session goes on")
            #expect(state.order == [host], "the guest who tried is dropped: \(ben)")
        }
        let state = try #require(world.cores[1].sessions[session.id])
        #expect(try ClusterSessionSnapshot.decode(ClusterSessionSnapshot.encode(state, homes: [:]), session: session.id).state.endingByOperators)
    }

    @Test("a session whose creator brought a ticket refuses a joiner without one on every relay, and admits one with it")
    func expiringInvitesOnEveryRelay() throws {
        var world = ReplicaWorld(relays: 2)
        for index in world.cores.indices { world.cores[index].unixOffset = 1_800_000_000 * 1_000_000_000 }
        let session = SessionFixture()
        let creator = SigningKeyPair()
        let ticket = InviteTicket.make(sessionID: session.id, expiry: 1_800_000_060, lifetime: 60, key: creator)
        _ = world.admit(session, on: 0, connection: 1, create: true, identity: creator, ticket: ticket)
        for core in world.cores { #expect(core.sessions[session.id]?.ticketed == true) }
        for relay in 0..<2 {
            _ = world.admit(session, on: relay, connection: 5)
            #expect(world.frames(relay, 5).contains { if case let .refusal(fault) = $0 { fault.code == .inviteExpired } else { false } })
            _ = world.admit(session, on: relay, connection: 6, ticket: ticket)
            #expect(world.welcomes(relay, 6).count == 1)
        }
        let state = try #require(world.cores[1].sessions[session.id])
        #expect(try ClusterSessionSnapshot.decode(ClusterSessionSnapshot.encode(state, homes: [:]), session: session.id).state.ticketed)
    }
}

extension ClusterEpochTests {
    @Test("a role record with its maker's statement is taken and pinned alike on every relay, and a snapshot carries the pins and a claim's displaced")
    func authoredRecordsOnEveryRelay() throws {
        var world = ReplicaWorld(relays: 2)
        let session = SessionFixture()
        let host = world.admit(session, on: 0, connection: 1, create: true)
        let ben = world.admit(session, on: 1, connection: 1)
        let next = SessionFixture(id: session.id, key: SigningKeyPair())
        // The host, alone on its relay, rekeys: the statement goes with the record.
        let rekey = RelayAuthority.signed(.epoch(1, verifier: next.key.publicKey, removed: nil), session: session.id, counter: 1,
                                          by: try #require(world.identity(of: host)))
        world.send(.authoredProposal(sequence: 1, statement: rekey, body: [0x00, 0x52, 7]), from: 0, connection: 1, at: 1_000)
        for sequence in UInt64(1)...30 {
            world.send(.proposal(sequence: sequence, retention: .kept, body: [UInt8(sequence)]), from: 1, connection: 1, at: 1_000)
        }
        world.pump(at: 2_000)
        for core in world.cores {
            let state = try #require(core.sessions[session.id])
            #expect(state.epoch == 1 && state.key == next.key.publicKey)
            #expect(state.orderedHistory.pinnedCount == 1 && state.orderedHistory.count == 31)
            #expect(state.orderedHistory.all.first?.body == [0x00, 0x52, 7])
        }
        // The host leaves; Ben claims; the snapshot carries the pins and whom the claim displaced.
        world.send(.leave(sequence: 2), from: 0, connection: 1, at: 3_000)
        world.pump(at: 3_500)
        let claim = RelayAuthority.signed(.claim, session: session.id, counter: 1, by: try #require(world.identity(of: ben)))
        world.send(.authoredProposal(sequence: 31, statement: claim, body: [0x00, 0x52, 4]), from: 1, connection: 1, at: 4_000)
        world.pump(at: 5_000)
        let state = try #require(world.cores[0].sessions[session.id])
        #expect(state.orderedHistory.pinnedCount == 2 && state.displacedKeys.count == 1 && state.claimantKey != nil)
        let decoded = try ClusterSessionSnapshot.decode(ClusterSessionSnapshot.encode(state, homes: [:]), session: session.id).state
        #expect(decoded.orderedHistory.pinnedCount == 2 && decoded.orderedHistory.all == state.orderedHistory.all)
        #expect(decoded.orderedHistory.pinnedBytes == state.orderedHistory.pinnedBytes)
        #expect(decoded.displacedKeys == state.displacedKeys && decoded.claimantKey == state.claimantKey && decoded.epoch == 1)
    }
}

extension ReplicaWorld {
    /// A signed statement of the participant `id` admitted here, about `session`, as its link
    /// sends one.
    func statement(_ session: UUID, _ change: RelayAuthority.Change, by id: UUID, counter: UInt64, sequence: UInt64) -> RelayFrame {
        .authority(sequence: sequence, RelayAuthority.signed(change, session: session, counter: counter, by: identity(of: id)!))
    }
}
