import Foundation
import Testing
@testable import TandemCluster
@testable import TandemNet
import TandemWire

/// Existing sessions are told when their relay cannot order anything: on
/// virtual time, relay cores in cluster mode fed one log (`ReplicaWorld`).
@Suite("Cluster availability")
struct ClusterAvailabilityTests {
    @Test("NATS lost for half a second: every participant of the relay's sessions is told, once; back, told again (once its log takes what waited), and what was sent meanwhile takes effect late, in order")
    func natsLostAndBack() throws {
        var world = ReplicaWorld(relays: 2)
        let first = SessionFixture(), second = SessionFixture()
        _ = world.admit(first, on: 0, connection: 1, create: true)
        _ = world.admit(first, on: 1, connection: 1)
        _ = world.admit(second, on: 0, connection: 2, create: true)
        let lost: Int64 = 1_000
        world.record(world.cores[0].setClusterAvailable(false, at: lost), on: 0)
        world.record(world.cores[0].onTick(at: lost + RelayCore.clusterLossHoldOff - 1), on: 0)
        #expect(world.notices(0, 1).isEmpty, "not within the hold-off")
        world.record(world.cores[0].onTick(at: lost + RelayCore.clusterLossHoldOff), on: 0)
        #expect(world.notices(0, 1) == [.unavailable] && world.notices(0, 2) == [.unavailable])
        // The other relay still reaches NATS: its participant hears nothing.
        #expect(world.notices(1, 1).isEmpty)
        #expect(world.cores[0].isClusterUnavailable(for: first.id) && !world.cores[1].isClusterUnavailable(for: first.id))
        // Told once: the shell may say it again, and ticks go on.
        #expect(world.cores[0].setClusterAvailable(false, at: 2_000).isEmpty)
        world.record(world.cores[0].onTick(at: lost + 2 * RelayCore.clusterLossHoldOff), on: 0)
        #expect(world.notices(0, 1) == [.unavailable])
        // A proposal made meanwhile is held (the shell keeps it until NATS is back).
        world.send(.proposal(sequence: 1, body: Array("meanwhile".utf8)), from: 0, connection: 1, at: 3_000)
        let held = world.cores[0].takeClusterOutput()
        #expect(held.entries.count == 1)
        #expect(world.ordered(1, 1).isEmpty)
        world.record(world.cores[0].setClusterAvailable(true, at: 4_000), on: 0)
        // The session with nothing on its way is available at once; the other once its log takes it.
        #expect(world.notices(0, 1) == [.unavailable] && world.notices(0, 2) == [.unavailable, .available])
        world.carry(held.entries)
        #expect(world.notices(0, 1) == [.unavailable, .available])
        #expect(world.ordered(0, 1).map { String(decoding: $0.body, as: UTF8.self) } == ["meanwhile"])
        #expect(world.ordered(1, 1) == world.ordered(0, 1))
        #expect(world.notices(1, 1).isEmpty)
    }

    @Test("a session's log that takes none of the relay's entries for 2 s: its participants there are told, not the others; applied, told again")
    func stalledLog() throws {
        var world = ReplicaWorld(relays: 2)
        let stuck = SessionFixture(), other = SessionFixture()
        _ = world.admit(stuck, on: 0, connection: 1, create: true)
        _ = world.admit(stuck, on: 1, connection: 1)
        _ = world.admit(other, on: 0, connection: 2, create: true)
        let second: Int64 = 1_000_000_000
        world.send(.proposal(sequence: 1, body: Array("p".utf8)), from: 0, connection: 1, at: second)
        // The shell took it; the stream takes nothing (a leader election, say).
        let taken = world.cores[0].takeClusterOutput().entries
        #expect(taken.count == 1)
        world.record(world.cores[0].onTick(at: second + 100_000_000), on: 0)
        world.record(world.cores[0].onTick(at: second + 2_000_000_000), on: 0)
        #expect(world.notices(0, 1).isEmpty, "not before the stated while")
        world.record(world.cores[0].onTick(at: second + 2_100_000_000), on: 0)
        #expect(world.notices(0, 1) == [.unavailable])
        #expect(world.cores[0].isClusterUnavailable(for: stuck.id) && !world.cores[0].isClusterUnavailable(for: other.id))
        // Neither the other session here nor the relay that submitted nothing tells anyone.
        #expect(world.notices(0, 2).isEmpty && world.notices(1, 1).isEmpty)
        world.record(world.cores[0].onTick(at: second + 2_500_000_000), on: 0)
        #expect(world.notices(0, 1) == [.unavailable], "told once")
        // The log takes it at last: applied everywhere, and the participants here hear it is back.
        world.carry(taken)
        #expect(world.notices(0, 1) == [.unavailable, .available])
        #expect(world.ordered(0, 1).count == 1 && world.ordered(1, 1) == world.ordered(0, 1))
        #expect(!world.cores[0].isClusterUnavailable(for: stuck.id))
    }

    @Test("NATS back while a session's log is still stalled: that session is told once its log takes entries, the others at once")
    func backWhileStalled() throws {
        var world = ReplicaWorld(relays: 1)
        let stuck = SessionFixture(), other = SessionFixture()
        _ = world.admit(stuck, on: 0, connection: 1, create: true)
        _ = world.admit(other, on: 0, connection: 2, create: true)
        world.send(.proposal(sequence: 1, body: [1]), from: 0, connection: 1, at: 0)
        let taken = world.cores[0].takeClusterOutput().entries
        world.record(world.cores[0].onTick(at: 100_000_000), on: 0)
        world.record(world.cores[0].onTick(at: 2_200_000_000), on: 0)
        #expect(world.notices(0, 1) == [.unavailable])
        world.record(world.cores[0].setClusterAvailable(false, at: 2_300_000_000), on: 0)
        world.record(world.cores[0].onTick(at: 2_800_000_000), on: 0)
        #expect(world.notices(0, 1) == [.unavailable] && world.notices(0, 2) == [.unavailable])
        world.record(world.cores[0].setClusterAvailable(true, at: 2_400_000_000), on: 0)
        #expect(world.notices(0, 1) == [.unavailable] && world.notices(0, 2) == [.unavailable, .available])
        world.carry(taken)
        #expect(world.notices(0, 1) == [.unavailable, .available])
    }

    @Test("NATS lost and back within the hold-off (a failover to another node): nobody hears of it")
    func failoverIsQuiet() throws {
        var world = ReplicaWorld(relays: 1)
        let session = SessionFixture()
        _ = world.admit(session, on: 0, connection: 1, create: true)
        for round in 0..<3 {
            let at = Int64(round) * 1_000_000_000
            world.record(world.cores[0].setClusterAvailable(false, at: at), on: 0)
            world.record(world.cores[0].onTick(at: at + 20_000_000), on: 0)
            world.record(world.cores[0].setClusterAvailable(true, at: at + 40_000_000), on: 0)
            world.record(world.cores[0].onTick(at: at + RelayCore.clusterLossHoldOff + 60_000_000), on: 0)
        }
        #expect(world.notices(0, 1).isEmpty)
        #expect(!world.cores[0].isClusterUnavailable(for: session.id))
    }

    @Test("a publish that failed for good counts as no longer outstanding: a quiet session is not stalled by it")
    func failedPublishIsNotOutstanding() throws {
        var world = ReplicaWorld(relays: 1)
        let session = SessionFixture()
        _ = world.admit(session, on: 0, connection: 1, create: true)
        world.send(.message(sequence: 1, recipients: .everyone, reliable: true, body: [1]), from: 0, connection: 1, at: 0)
        let taken = world.cores[0].takeClusterOutput().entries
        world.record(world.cores[0].onClusterPublishFailed(taken, reason: "timeout", at: 1_000), on: 0)
        world.record(world.cores[0].onTick(at: 100_000_000), on: 0)
        world.record(world.cores[0].onTick(at: 5_000_000_000), on: 0)
        #expect(world.notices(0, 1).isEmpty)
    }

    @Test("a stalled session whose entries then fail for good is told it is available again: with nothing on its way it waits on nothing")
    func stalledThenFailed() throws {
        var world = ReplicaWorld(relays: 1)
        let session = SessionFixture()
        _ = world.admit(session, on: 0, connection: 1, create: true)
        _ = world.admit(session, on: 0, connection: 2)
        let second: Int64 = 1_000_000_000
        world.send(.proposal(sequence: 1, body: Array("p".utf8)), from: 0, connection: 1, at: second)
        let taken = world.cores[0].takeClusterOutput().entries
        world.record(world.cores[0].onTick(at: second + 100_000_000), on: 0)
        world.record(world.cores[0].onTick(at: second + 2_100_000_000), on: 0)
        #expect(world.notices(0, 2) == [.unavailable])
        // The publish fails for good: the proposer is cut (it may resume), the other stays, and
        // is not left unavailable with nothing of the session's waiting on the log.
        world.record(world.cores[0].onClusterPublishFailed(taken, reason: "timeout", at: second + 15_000_000_000), on: 0)
        #expect(world.notices(0, 2) == [.unavailable, .available])
        #expect(!world.cores[0].isClusterUnavailable(for: session.id))
    }
}

extension ReplicaWorld {
    /// The codes of the notices `connection` of `relay` was sent, in order.
    func notices(_ relay: Int, _ connection: UInt64) -> [RelayNoticeCode] {
        frames(relay, connection).compactMap { if case let .notice(notice) = $0 { notice.code } else { nil } }
    }

    /// Appends `entries` (taken from a core earlier) to the log and applies them everywhere.
    mutating func carry(_ entries: [ClusterLogEntry], at now: Int64 = 10_000_000_000) {
        log += entries
        for entry in entries {
            for relay in cores.indices { record(cores[relay].applyCluster(entry, at: now), on: relay) }
        }
        pump(at: now)
    }
}
