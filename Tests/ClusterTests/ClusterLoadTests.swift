import Foundation
import Testing
@testable import TandemCluster
@testable import TandemNet
import TandemWire

/// Loads in cluster mode: journal loads paced as the single relay paces them, and a
/// cap on the sessions that replay their logs at once.
@Suite("Cluster loads")
struct ClusterLoadTests {
    @Test("a journal load goes to its participant a window at a time as its connection drains, in order, whole; the replica's outbox holds it all alike")
    func loadIsPaced() throws {
        var world = ReplicaWorld(relays: 2)
        let session = SessionFixture()
        let host = world.admit(session, on: 0, connection: 1, create: true)
        _ = world.admit(session, on: 1, connection: 1)
        let size = 5 * RelayWireLimits.attachmentChunkSize + 1_000
        let data = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let entry = RelayAttachmentEntry(id: UUID(), owner: host, size: size, metadata: [1])
        world.send(.attachmentAdd(sequence: 1, entry: entry), from: 0, connection: 1, at: 0)
        var sequence: UInt64 = 2
        var offset = 0
        while offset < size {
            let end = min(offset + RelayWireLimits.attachmentChunkSize, size)
            world.send(.attachmentChunk(sequence: sequence, id: entry.id, data: data[offset..<end]), from: 0, connection: 1, at: 0)
            sequence += 1
            offset = end
        }
        world.pump(at: 1_000)
        let before = world.frames(0, 1).count
        world.send(.loadRequest(sequence: sequence, id: entry.id), from: 0, connection: 1, at: 2_000)
        // A message for the loader while its load drains comes after the load, in sequence.
        world.send(.message(sequence: 1, recipients: .everyone, reliable: true, body: Array("later".utf8)), from: 1, connection: 1, at: 2_000)
        let directives = world.pumpReturning(at: 3_000, relay: 0)
        let window = world.frames(0, 1)[before...].filter { if case .loadChunk = $0 { true } else { false } }
        // The default window (1 MiB): four chunks now, the rest once the connection drains.
        #expect(window.count == 4, "\(window.count) chunks at once")
        #expect(directives.contains { if case .notifyWhenDrained(RelayConnectionID(1)) = $0 { true } else { false } })
        for _ in 0..<10 {
            let more = world.cores[0].onDrained(RelayConnectionID(1), at: 4_000)
            world.record(more, on: 0)
            if !more.contains(where: { if case .notifyWhenDrained = $0 { true } else { false } }) { break }
        }
        let sent = world.frames(0, 1)[before...].filter { $0.sequence != nil }
        var loaded: [UInt8] = []
        for case let .loadChunk(_, _, piece) in sent { loaded += piece }
        #expect(loaded == data)
        #expect(sent.contains { if case .outcome(_, _, nil) = $0 { true } else { false } })
        let numbers = sent.compactMap(\.sequence)
        #expect(numbers == Array(numbers[0]...numbers[0] + UInt64(numbers.count - 1)), "in order, none twice")
        if case let .delivery(_, _, _, body)? = sent.last { #expect(String(decoding: body, as: UTF8.self) == "later") } else { Issue.record("\(String(describing: sent.last))") }
        #expect(world.cores[0].onDrained(RelayConnectionID(1), at: 5_000).isEmpty, "nothing left to pace")
        let outboxes = world.cores.map { Array($0.sessions[session.id]?.participants[host]?.outbox.pending ?? []) }
        #expect(outboxes[0] == outboxes[1])
    }

    @Test("at most the limit load at once; the others start in the order asked as each finishes")
    func loadQueue() {
        var queue = ClusterLoadQueue(limit: 2)
        let sessions = (0..<5).map { _ in UUID() }
        #expect(sessions.map { queue.request($0) } == [true, true, false, false, false])
        #expect(queue.request(sessions[2]) == false && queue.waitingCount == 3, "asked twice, queued once")
        #expect(queue.finish(sessions[0]) == [sessions[2]])
        // One no longer wanted leaves the queue without starting anything.
        #expect(queue.finish(sessions[3]).isEmpty && queue.waitingCount == 1)
        #expect(queue.finish(sessions[1]) == [sessions[4]])
        #expect(queue.finish(sessions[2]).isEmpty && queue.finish(sessions[4]).isEmpty)
        #expect(queue.loading.isEmpty && queue.peak == 2)
        #expect(ClusterLoadQueue(limit: 0).limit == 1)
    }
}

extension ReplicaWorld {
    /// `pump`, returning what `relay` answered along the way (the sends are recorded as usual).
    mutating func pumpReturning(at now: Int64, relay: Int) -> [RelayDirective] {
        var directives: [RelayDirective] = []
        for _ in 0..<16 {
            var fresh: [ClusterLogEntry] = []
            for index in cores.indices { fresh += cores[index].takeClusterOutput().entries }
            guard !fresh.isEmpty else { break }
            log += fresh
            for entry in fresh {
                for index in cores.indices {
                    let answered = cores[index].applyCluster(entry, at: now)
                    if index == relay { directives += answered }
                    record(answered, on: index)
                }
            }
        }
        return directives
    }
}
