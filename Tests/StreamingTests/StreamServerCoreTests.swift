import Foundation
import Testing
import TandemStreaming

/// The holder's decisions on virtual time: what it refuses, the turns it gives its askers, and
/// the rate it keeps.
@Suite struct StreamServerCoreTests {
    let identity = "s=4000000;h=0123456789abcdef"
    let ana = UUID()
    let ben = UUID()

    func server(_ adjust: (inout StreamServerCore.Configuration) -> Void = { _ in }) -> StreamServerCore {
        var configuration = StreamServerCore.Configuration()
        adjust(&configuration)
        var server = StreamServerCore(configuration: configuration)
        server.hold("d=12.000;" + identity, size: 4_000_000)
        return server
    }

    @Test func badRangesUnheldItemsAndFullQueuesAreRefused() {
        var server = server { $0.maximumQueuedPerAsker = 2 }
        #expect(server.onRequest(from: ana, id: 1, identity: "s=1;h=00", offset: 0, length: 10) == [.refuse(.refusal(id: 1, reason: .notHeld), to: ana)])
        for (offset, length) in [(-1, 10), (4_000_000, 1), (3_999_990, 11), (0, 0), (0, 2 * 1024 * 1024)] as [(Int64, Int)] {
            #expect(server.onRequest(from: ana, id: 2, identity: identity, offset: offset, length: length)
                == [.refuse(.refusal(id: 2, reason: .badRange), to: ana)])
        }
        #expect(server.onRequest(from: ana, id: 3, identity: identity, offset: 0, length: 10) == [.serve])
        #expect(server.onRequest(from: ana, id: 4, identity: identity, offset: 10, length: 10) == [.serve])
        #expect(server.onRequest(from: ana, id: 5, identity: identity, offset: 20, length: 10) == [.refuse(.refusal(id: 5, reason: .busy), to: ana)])
        // Another asker has a queue of its own.
        #expect(server.onRequest(from: ben, id: 6, identity: identity, offset: 20, length: 10) == [.serve])
    }

    @Test func askersTakeTurnsChunkByChunk() {
        var server = server()
        _ = server.onRequest(from: ana, id: 1, identity: identity, offset: 0, length: 262_144)
        _ = server.onRequest(from: ben, id: 2, identity: identity, offset: 1_000_000, length: 131_072)
        let sent = server.nextChunks(now: 0).compactMap { directive -> (UUID, Int64, Int)? in
            guard case .send(let chunk) = directive else { return nil }
            return (chunk.asker, chunk.offset, chunk.length)
        }
        #expect(sent.map(\.0) == [ana, ben, ana, ben, ana, ana])
        #expect(sent.map(\.1) == [0, 1_000_000, 65_536, 1_065_536, 131_072, 196_608])
        #expect(sent.allSatisfy { $0.2 == 65_536 })
        #expect(!server.hasWork)
        #expect(server.bytesServed == 393_216)
    }

    @Test func theRateHoldsChunksBackAndSaysWhenToComeBack() {
        var server = server {
            $0.bytesPerSecond = 1_048_576
            $0.burstBytes = 131_072
        }
        _ = server.onRequest(from: ana, id: 1, identity: identity, offset: 0, length: 1_048_576)
        let first = server.nextChunks(now: 0)
        #expect(first.filter { if case .send = $0 { true } else { false } }.count == 2)
        // 64 KiB at 1 MiB/s: 62.5 ms.
        #expect(first.last == .wake(at: 62_500_000))
        #expect(server.nextChunks(now: 30_000_000).filter { if case .send = $0 { true } else { false } }.isEmpty)
        #expect(server.nextChunks(now: 63_000_000).filter { if case .send = $0 { true } else { false } }.count == 1)
        // Over one virtual second, about a second's worth (plus the burst), never more.
        var sent = 3 * 65_536
        var now: Int64 = 63_000_000
        while now < 1_000_000_000 {
            now += 10_000_000
            for case .send(let chunk) in server.nextChunks(now: now) { sent += chunk.length }
        }
        #expect(sent <= 1_048_576 + 131_072 + 65_536)
        #expect(sent >= 1_048_576 - 65_536)
    }

    @Test func aDeferredChunkGoesFirstAgainAndAGoneAskerIsForgotten() {
        var server = server()
        _ = server.onRequest(from: ana, id: 1, identity: identity, offset: 0, length: 196_608)
        let chunks = server.nextChunks(now: 0).compactMap { directive -> StreamServerCore.Chunk? in
            if case .send(let chunk) = directive { chunk } else { nil }
        }
        #expect(chunks.count == 3)
        // The link refused the second and third: they go back, in order.
        for chunk in chunks[1...].reversed() { _ = server.onSendDeferred(chunk, now: 0) }
        let again = server.nextChunks(now: 1_000_000).compactMap { directive -> Int64? in
            if case .send(let chunk) = directive { chunk.offset } else { nil }
        }
        #expect(again == [65_536, 131_072])
        _ = server.onRequest(from: ben, id: 2, identity: identity, offset: 0, length: 65_536)
        server.onAskerGone(ben)
        #expect(!server.hasWork)
        #expect(server.nextChunks(now: 2_000_000).isEmpty)
    }
}
