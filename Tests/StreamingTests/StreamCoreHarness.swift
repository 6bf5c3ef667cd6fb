import Foundation
import TandemIdentity
import TandemStreaming

/// Content for the cores' tests: `size` bytes of a pattern, its identity, and holders that
/// serve it (or other bytes of the same size) through a real `StreamServerCore`.
struct StreamFixture {
    let bytes: [UInt8]
    let identity: String

    init(size: Int, seed: UInt8 = 7) {
        // A pseudo-random pattern of a prime period, repeated (fast even in a debug build): a
        // block served from the wrong offset differs.
        var generator = UInt32(seed) &* 2_654_435_761
        let pattern = (0..<65_537).map { _ in
            generator = generator &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: generator >> 24)
        }
        var made: [UInt8] = []
        made.reserveCapacity(size)
        while made.count < size { made += pattern.prefix(size - made.count) }
        bytes = made
        let held = bytes
        identity = ContentIdentity.of(size: Int64(size)) { offset, count in Array(held[Int(offset)..<min(held.count, Int(offset) + count)]) }
    }
}

/// One reader core and its holders, on a virtual clock: messages go from reader to holders and
/// back when `deliver` is called, so that a test decides what arrives when.
struct StreamWorld {
    var reader: StreamReaderCore
    var servers: [UUID: StreamServerCore] = [:]
    var contents: [UUID: [UInt8]] = [:]
    var now: Int64 = 0
    /// Requests sent by the reader, not yet delivered: (holder, message).
    var outbox: [(UUID, StreamMessage)] = []
    var arrived: [Int] = []
    var events: [StreamReaderCore.Directive] = []
    var wakes: [Int64] = []

    init(fixture: StreamFixture, configuration: StreamReaderCore.Configuration = .init()) {
        reader = StreamReaderCore(identity: ContentIdentity.announcing(duration: 20, fixture.identity), configuration: configuration)!
    }

    mutating func addHolder(_ id: UUID, host: Bool, content: [UInt8], identity: String) {
        var server = StreamServerCore()
        server.hold(identity, size: Int64(content.count))
        servers[id] = server
        contents[id] = content
        take(reader.onHolder(id, host: host, now: now))
    }

    mutating func take(_ directives: [StreamReaderCore.Directive]) {
        for directive in directives {
            switch directive {
            case .send(let message, let to): outbox.append((to, message))
            case .blockArrived(let block): arrived.append(block)
            case .wake(let at): wakes.append(at)
            default: events.append(directive)
            }
        }
    }

    /// Delivers every request sent so far to its holder (unless it is `silent`), serves it
    /// whole and hands the chunks to the reader; returns how many requests were delivered.
    @discardableResult
    mutating func deliver(except silent: Set<UUID> = []) -> Int {
        let pending = outbox
        outbox = []
        var delivered = 0
        for (holder, message) in pending where !silent.contains(holder) {
            guard case .request(let id, let identity, let offset, let length) = message, var server = servers[holder] else { continue }
            delivered += 1
            var replies: [StreamMessage] = []
            for directive in server.onRequest(from: UUID(uuidString: "00000000-0000-0000-0000-0000000000AA")!, id: id,
                                              identity: identity, offset: offset, length: length) {
                if case .refuse(let refusal, _) = directive { replies.append(refusal) }
            }
            // 100 virtual ms a request: the holder's rate never binds here.
            now += 100_000_000
            for directive in server.nextChunks(now: now) {
                guard case .send(let chunk) = directive else { continue }
                let content = contents[holder]!
                replies.append(.chunk(id: chunk.request, offset: chunk.offset,
                                      bytes: Array(content[Int(chunk.offset)..<(Int(chunk.offset) + chunk.length)])))
            }
            servers[holder] = server
            for reply in replies { take(reader.onMessage(reply, from: holder, now: now)) }
        }
        return delivered
    }

    /// Reads `count` bytes at `offset`, delivering as needed (at most `rounds` times).
    mutating func read(_ offset: Int64, _ count: Int, rounds: Int = 50) -> [UInt8]? {
        var collected: [UInt8] = []
        var at = offset
        var round = 0
        while collected.count < count {
            let (outcome, directives) = reader.onRead(offset: at, now: now)
            take(directives)
            switch outcome {
            case .end: return collected
            case .available(let start, let bytes):
                let from = Int(at - start)
                let taken = bytes[from..<min(bytes.count, from + count - collected.count)]
                collected += taken
                at += Int64(taken.count)
            case .pending:
                round += 1
                guard round <= rounds, deliver() > 0 || !outbox.isEmpty else { return nil }
            }
        }
        return collected
    }
}
