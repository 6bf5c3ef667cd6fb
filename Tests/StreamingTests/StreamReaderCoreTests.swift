import Foundation
import Testing
import TandemIdentity
@testable import TandemStreaming

/// The reader's decisions on virtual time: whom it asks, how much, what it does when a holder
/// goes or lies, and what its cache keeps.
@Suite struct StreamReaderCoreTests {
    let host = UUID()
    let other = UUID()

    @Test func readsWaitForTheEndsThenServeExactBytesFromTheHostFirst() {
        let fixture = StreamFixture(size: 3_000_000)
        var world = StreamWorld(fixture: fixture)
        // Another holder announced first; the host still goes first.
        world.addHolder(other, host: false, content: fixture.bytes, identity: fixture.identity)
        world.addHolder(host, host: true, content: fixture.bytes, identity: fixture.identity)
        #expect(world.reader.holders == [host, other])
        let (outcome, directives) = world.reader.onRead(offset: 1_000_000, now: 0)
        #expect(outcome == .pending(block: 3))
        world.take(directives)
        let asked = world.outbox.compactMap { entry -> Int64? in
            guard case .request(_, _, let offset, _) = entry.1 else { return nil }
            #expect(entry.0 == host)
            return offset
        }
        // The ends first (blocks 0 and 11 of 12), then the block the read waits for.
        let expected: [Int64] = [0, 11 * 262_144, 3 * 262_144]
        #expect(Array(asked.prefix(3)) == expected)
        #expect(asked.count == 8)
        #expect(!world.reader.verified)
        world.deliver()
        #expect(world.reader.verified)
        #expect(world.arrived.contains(3))
        let read = world.read(1_000_000, 500_000)
        #expect(read == Array(fixture.bytes[1_000_000..<1_500_000]))
        #expect(world.read(2_999_990, 100) == Array(fixture.bytes[2_999_990...]))
        #expect(world.reader.onRead(offset: 3_000_000, now: world.now).outcome == .end)
    }

    @Test func requestsInFlightAndTheReadAheadWindowStayBounded() {
        let fixture = StreamFixture(size: 40 * 262_144)
        var configuration = StreamReaderCore.Configuration()
        configuration.maximumRequestsInFlight = 4
        configuration.readAheadBlocks = 6
        var world = StreamWorld(fixture: fixture, configuration: configuration)
        world.addHolder(host, host: true, content: fixture.bytes, identity: fixture.identity)
        world.take(world.reader.onRead(offset: 0, now: 0).directives)
        #expect(world.outbox.count == 4)
        #expect(world.reader.requestsInFlight == 4)
        for _ in 0..<10 { world.deliver() }
        // Block 0 read: the window is blocks 1...6, the tail (39) fetched to verify.
        #expect(world.reader.statistics.bytesReceived == Int64(8 * 262_144))
        #expect(world.reader.requestsInFlight == 0)
    }

    @Test func aDepartingHolderHandsItsRequestsToTheNextAndNoneLeftSuspendsUntilOneAnnounces() {
        let fixture = StreamFixture(size: 2_000_000)
        var world = StreamWorld(fixture: fixture)
        world.addHolder(host, host: true, content: fixture.bytes, identity: fixture.identity)
        world.addHolder(other, host: false, content: fixture.bytes, identity: fixture.identity)
        world.take(world.reader.onRead(offset: 0, now: 0).directives)
        #expect(world.outbox.allSatisfy { $0.0 == host })
        let lost = world.outbox.count
        world.outbox = []
        world.take(world.reader.onHolderGone(host, now: 10))
        #expect(world.outbox.count == lost)
        #expect(world.outbox.allSatisfy { $0.0 == other })
        world.outbox = []
        world.take(world.reader.onHolderGone(other, now: 20))
        #expect(world.events == [.suspended])
        #expect(world.reader.isSuspended)
        // Still suspended on a later read: said once.
        world.take(world.reader.onRead(offset: 0, now: 30).directives)
        #expect(world.events == [.suspended])
        world.addHolder(host, host: true, content: fixture.bytes, identity: fixture.identity)
        #expect(world.events == [.suspended, .resumed])
        #expect(world.read(0, 1000) == Array(fixture.bytes[0..<1000]))
    }

    @Test func aSilentHolderTimesOutThenTheNextIsAsked() {
        let fixture = StreamFixture(size: 1_000_000)
        var world = StreamWorld(fixture: fixture)
        world.addHolder(host, host: true, content: fixture.bytes, identity: fixture.identity)
        world.addHolder(other, host: false, content: fixture.bytes, identity: fixture.identity)
        world.take(world.reader.onRead(offset: 0, now: 0).directives)
        let timeout = world.reader.configuration.requestTimeout
        #expect(world.wakes.contains(timeout))
        world.outbox = []
        // Nothing before the timeout.
        world.take(world.reader.onTick(now: timeout - 1))
        #expect(world.outbox.isEmpty)
        world.take(world.reader.onTick(now: timeout))
        #expect(!world.outbox.isEmpty && world.outbox.allSatisfy { $0.0 == host })
        world.outbox = []
        world.take(world.reader.onTick(now: 2 * timeout))
        // Two timeouts in a row: the other holder now.
        #expect(world.reader.currentHolder == other)
        #expect(!world.outbox.isEmpty && world.outbox.allSatisfy { $0.0 == other })
        world.now = 2 * timeout
        #expect(world.read(0, 100) == Array(fixture.bytes[0..<100]))
    }

    @Test func aHolderWithOtherContentIsRejectedAndNothingOfItReachesAReader() {
        let fixture = StreamFixture(size: 1_500_000)
        var forged = fixture.bytes
        forged[10] ^= 0xFF
        var world = StreamWorld(fixture: fixture)
        world.addHolder(host, host: true, content: forged, identity: fixture.identity)
        world.addHolder(other, host: false, content: fixture.bytes, identity: fixture.identity)
        world.take(world.reader.onRead(offset: 0, now: 0).directives)
        world.deliver()
        #expect(world.events == [.rejectedHolder(host)])
        #expect(world.reader.holders == [other])
        #expect(!world.reader.verified)
        #expect(world.read(0, 100) == Array(fixture.bytes[0..<100]))
    }

    @Test func chunksFromAnotherSenderOrOutOfPlaceAreIgnored() {
        let fixture = StreamFixture(size: 600_000)
        var world = StreamWorld(fixture: fixture)
        world.addHolder(host, host: true, content: fixture.bytes, identity: fixture.identity)
        world.take(world.reader.onRead(offset: 0, now: 0).directives)
        guard case .request(let id, _, _, _)? = world.outbox.first?.1 else {
            Issue.record("no request")
            return
        }
        world.take(world.reader.onMessage(.chunk(id: id, offset: 0, bytes: [1, 2, 3]), from: other, now: 1))
        world.take(world.reader.onMessage(.chunk(id: id, offset: 5, bytes: [1, 2, 3]), from: host, now: 1))
        world.take(world.reader.onMessage(.chunk(id: 999, offset: 0, bytes: [1]), from: host, now: 1))
        #expect(world.reader.statistics.ignoredChunks == 3)
        #expect(world.read(0, 10) == Array(fixture.bytes[0..<10]))
    }

    @Test func theCacheStaysWithinItsBoundOverAWholeRead() {
        let fixture = StreamFixture(size: 60 * 262_144)
        var configuration = StreamReaderCore.Configuration()
        configuration.cacheBytes = 8 * 262_144
        configuration.readAheadBlocks = 4
        var world = StreamWorld(fixture: fixture, configuration: configuration)
        world.addHolder(host, host: true, content: fixture.bytes, identity: fixture.identity)
        var peak = 0
        var offset: Int64 = 0
        while offset < Int64(fixture.bytes.count) {
            guard let bytes = world.read(offset, 65_536) else {
                Issue.record("read at \(offset) did not complete")
                return
            }
            #expect(bytes == Array(fixture.bytes[Int(offset)..<Int(offset) + 65_536]))
            peak = max(peak, world.reader.cacheOccupancy)
            offset += 65_536
        }
        // The bound, plus at most one block arriving past it before eviction.
        #expect(peak <= configuration.cacheBytes + 262_144)
        #expect(world.reader.statistics.evictions > 40)
        // A seek back: fetched again.
        let before = world.reader.statistics.requests
        #expect(world.read(0, 10) == Array(fixture.bytes[0..<10]))
        #expect(world.reader.statistics.requests > before)
    }

    @Test func messagesRoundTripAndGarbageIsRefused() {
        let messages: [StreamMessage] = [
            .holding([HeldItem(name: "a.mp4", identity: "s=10;h=00"), HeldItem(name: "b", identity: "s=20;h=11")], host: true), .request(id: 7, identity: "s=10;h=00", offset: 42, length: 1000),
            .chunk(id: 1 << 40, offset: 262_144, bytes: [0, 1, 2, 255]), .refusal(id: 3, reason: .busy), .inquiry,
        ]
        for message in messages { #expect(StreamMessage(decoding: message.encoded) == message) }
        #expect(StreamMessage(decoding: []) == nil)
        #expect(StreamMessage(decoding: [9]) == nil)
        #expect(StreamMessage(decoding: [2, 0, 0]) == nil)
        #expect(StreamMessage(decoding: StreamMessage.refusal(id: 3, reason: .busy).encoded + [0]) == nil)
        #expect(StreamMessage(decoding: [4, 0, 0, 0, 0, 0, 0, 0, 1, 99]) == nil)
    }

    @Test func aLongNameIsCutAtACharacterSoTheMessageStillDecodes() throws {
        // 511 ASCII bytes, then a 4-byte character straddling the 512-byte limit.
        let name = String(repeating: "a", count: StreamMessage.maximumIdentityLength - 1) + "🎬" + "tail"
        let message = StreamMessage.holding([HeldItem(name: name, identity: "s=10;h=00")], host: false)
        guard case let .holding(items, _)? = StreamMessage(decoding: message.encoded) else {
            Issue.record("a holding with a long name did not decode")
            return
        }
        #expect(items.first?.name == String(repeating: "a", count: StreamMessage.maximumIdentityLength - 1))
    }

    @Test func aSizeNoArithmeticCanHoldIsRefused() {
        #expect(StreamReaderCore(identity: "s=\(Int64.max);h=00") == nil)
        #expect(StreamReaderCore(identity: "s=\(StreamReaderCore.maximumSize + 1);h=00") == nil)
        #expect(StreamReaderCore(identity: "s=\(StreamReaderCore.maximumSize);h=00")?.blockCount ?? 0 > 0)
    }
}
