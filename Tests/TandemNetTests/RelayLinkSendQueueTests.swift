import Foundation
import TandemNet
import TandemTestKit
import Testing

/// The link's own output queue is capped in frames and bytes: a sender that outruns its link
/// gets `queueFull` at once, and may send again once the relay has acknowledged what it held.
/// In virtual time, on the in-memory relay (the real `RelayCore`), so that nothing the relay
/// acknowledges happens unless the test advances the loop.
@Suite struct RelayLinkSendQueueTests {
    static let ms: Int64 = 1_000_000

    static func world(frames: Int = 8, bytes: Int = 1_000_000) -> VirtualRelayWorld {
        var link = RelayLinkConfiguration()
        link.maximumQueuedFrames = frames
        link.maximumQueuedBytes = bytes
        return VirtualRelayWorld(link: link)
    }

    static func isQueueFull(_ error: any Error) -> Bool { (error as? RelayError)?.code == .queueFull }

    @Test func aSenderPastTheFrameCapIsRefusedUntilTheRelayAcknowledges() throws {
        let world = Self.world(frames: 8)
        defer { world.shutdown() }
        let ana = try world.join("ana")
        let ben = try world.join("ben")
        // Handed over and not yet taken in by the loop: counted already.
        for index in 0..<8 { try ana.link.send([UInt8(index)], to: .everyone, reliable: true) }
        let refused = #expect(throws: RelayError.self) { try ana.link.send([8], to: .everyone, reliable: true) }
        #expect(refused?.code == .queueFull)
        #expect(refused?.description.contains("maximumQueuedFrames") == true)
        // Taken in, written and delivered, but not yet acknowledged by the relay (it acknowledges
        // on its tick within a second, or at once every 64 frames): still counted.
        world.advance(by: 5 * Self.ms)
        #expect(ben.messages.map(\.body) == (0..<8).map { [UInt8($0)] })
        #expect(throws: RelayError.self) { try ana.link.sendOrdered([9]) }
        // Acknowledged: room again, and nothing was lost or reordered.
        world.advance(by: 1_100 * Self.ms)
        try ana.link.send([10], to: .everyone, reliable: true)
        world.advance(by: 5 * Self.ms)
        #expect(ben.messages.map(\.body) == (0..<8).map { [UInt8($0)] } + [[10]])
    }

    @Test func aSenderPastTheByteCapIsRefusedAndSmallerSendsStillFit() throws {
        let world = Self.world(frames: 100, bytes: 1_000)
        defer { world.shutdown() }
        let ana = try world.join("ana")
        let ben = try world.join("ben")
        try ana.link.send([UInt8](repeating: 1, count: 400), to: .everyone, reliable: true)
        try ana.link.sendOrdered([UInt8](repeating: 2, count: 400))
        let refused = #expect(throws: RelayError.self) { try ana.link.send([UInt8](repeating: 3, count: 400), to: .everyone, reliable: true) }
        #expect(refused?.code == .queueFull)
        // What fits under the cap still goes.
        try ana.link.send([UInt8](repeating: 4, count: 100), to: .everyone, reliable: true)
        // Delivered, and acknowledged by the relay's tick within a second.
        world.advance(by: 1_100 * Self.ms)
        #expect(ben.messages.map(\.body.count) == [400, 100])
        #expect(ben.ordered.map(\.body.count) == [400])
        try ana.link.send([UInt8](repeating: 5, count: 900), to: .everyone, reliable: true)
    }

    @Test func unreliableMessagesSentAsDatagramsHoldNothing() throws {
        let world = Self.world(frames: 2)
        defer { world.shutdown() }
        let ana = try world.join("ana")
        _ = try world.join("ben")
        for index in 0..<20 {
            try ana.link.send([UInt8(index)], to: .everyone, reliable: false)
            // Each is taken in (and goes out as a datagram) before the next is handed over.
            world.advance(by: Self.ms)
        }
        try ana.link.send([99], to: .everyone, reliable: true)
    }
}
