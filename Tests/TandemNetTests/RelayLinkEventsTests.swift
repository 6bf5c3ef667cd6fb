import Foundation
import Synchronization
import TandemClock
import TandemNet
import TandemTestKit
import TandemWire
import Testing

/// Where a link's events go, on virtual time: held until their reader comes, then either the
/// `events` stream's or, taken on the link's loop (as a session takes them), a handler's, in
/// the order they were emitted and none twice.
@Suite struct RelayLinkEventsTests {
    static let ms: Int64 = 1_000_000

    @Test func eventsWaitForTheirReaderAndGoToOneOnlyInOrder() async throws {
        let world = VirtualRelayWorld()
        defer { world.shutdown() }
        let ana = try world.join("ana")
        let ben = try world.join("ben")
        for index: UInt8 in 1...3 { try ana.link.send([index], to: .everyone, reliable: true) }
        world.advance(by: 50 * Self.ms)
        #expect(ben.messages.count == 3, "delivered, and held for a reader that has not come yet")

        // Taken on the loop (nothing drives the embedded loop between advances): the held
        // events first, in order, then each new one as it is emitted, in the same call.
        let taken = Mutex<[[UInt8]]>([])
        ben.link.takeEvents { event in
            if case let .message(_, body, _) = event { taken.withLock { $0.append(body) } }
        }
        #expect(taken.withLock { $0 } == [[1], [2], [3]])
        try ana.link.send([4], to: .everyone, reliable: true)
        world.advance(by: 50 * Self.ms)
        #expect(taken.withLock { $0 } == [[1], [2], [3], [4]])

        // Taken events are not also in the stream: it ends with nothing in it once the link ends.
        world.leave(ben)
        var streamed = 0
        for await _ in ben.link.events { streamed += 1 }
        #expect(streamed == 0)

        // A stream read late still gets what was held for it, from the first event on.
        var iterator = ana.link.events.makeAsyncIterator()
        guard case let .participantJoined(record)? = await iterator.next() else {
            Issue.record("ana's first event is not ben's arrival")
            return
        }
        #expect(record.id == ben.id)
    }
}
