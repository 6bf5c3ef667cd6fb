import Foundation
import Testing
@testable import TandemCluster
import TandemNATS
@testable import TandemNet
import TandemWire

/// A removal on a cluster, on virtual time: the creator's epoch frame goes through the session's
/// log and every relay applies it alike, so that the one removed is dropped by its own relay and
/// every relay admits by the new verifier alone; a snapshot carries the epoch.
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

        // Ben, no creator, sends one: it is ordered in the log and changes nothing.
        world.send(.epoch(sequence: 1, epoch: 1, verifier: next.key.publicKey, removed: host), from: 1, connection: 1, at: 1_000)
        world.pump(at: 1_500)
        #expect(world.cores.allSatisfy { $0.sessions[session.id]?.epoch == 0 })

        world.send(.epoch(sequence: 1, epoch: 1, verifier: next.key.publicKey, removed: ben), from: 0, connection: 1, at: 2_000)
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
        #expect(decoded.operatorKey == state.operatorKey && decoded.operatorKey != nil && decoded.removed == [ben])
    }
}
