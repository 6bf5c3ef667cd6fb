import Foundation
@testable import TandemNet
import TandemWire
import Testing

/// When links and the relay acknowledge, on virtual time: with frames going the other way the
/// acknowledgement rides on them and never costs a write of its own; one-way traffic is
/// acknowledged about once an interval; a lone frame is still acknowledged within the interval;
/// and what either side keeps for a resumption stays bounded by count and by bytes.
@Suite("Relay acknowledgement rules")
struct AcknowledgementRulesTests {
    static let ms: Int64 = 1_000_000
    private let key = [UInt8](repeating: 5, count: 32)
    private let session = UUID()

    @Test("the tick's acknowledgement: the next phase instant, or the one after when the last acknowledgement was under half an interval before")
    func standaloneDue() {
        let interval: Int64 = 1_000
        #expect(AcknowledgementSchedule.due(last: 0, acknowledgedAt: AcknowledgementSchedule.never, interval: interval) == 1_000)
        #expect(AcknowledgementSchedule.due(last: 0, acknowledgedAt: 10, interval: interval) == 1_000, "a tick's acknowledgement, on the phase")
        #expect(AcknowledgementSchedule.due(last: 0, acknowledgedAt: 499, interval: interval) == 1_000)
        #expect(AcknowledgementSchedule.due(last: 0, acknowledgedAt: 501, interval: interval) == 2_000, "one that rode on a frame lately")
        #expect(AcknowledgementSchedule.isPressing(frames: 64, bytes: 0))
        #expect(AcknowledgementSchedule.isPressing(frames: 1, bytes: 1024 * 1024))
        #expect(!AcknowledgementSchedule.isPressing(frames: 63, bytes: 1024 * 1024 - 1))
    }

    @Test("one way, ten messages a second: about one acknowledgement a second each way, none late, no pings from the links")
    func oneWayIsAcknowledgedOnceAnInterval() {
        var world = LinkWorld()
        let ana = world.add("ana", create: true)
        let ben = world.add("ben", create: false)
        world.join(ana)
        world.join(ben)
        world.counts = [:]
        let start = world.now
        var longestOwed: Int64 = 0
        while world.now < start + 5_000 * Self.ms {
            if (world.now - start) % (100 * Self.ms) == 0 { world.send(from: ana, [UInt8](repeating: 1, count: 8)) }
            _ = world.advance(by: 10 * Self.ms)
            // How long ana has waited for the relay's acknowledgement, and ben's outbox at the relay.
            if world.links[ana].core.unacknowledgedCount > 0 {
                longestOwed = max(longestOwed, world.now - (world.lastRelayAck[ana] ?? start))
            }
        }
        #expect(world.messages[ben] == 50)
        let relayAcks = world.counts[.relayAck(ana)] ?? 0
        let benAcks = world.counts[.linkAck(ben)] ?? 0
        #expect((4...6).contains(relayAcks), "the relay acknowledged ana \(relayAcks) times in 5 s")
        #expect((4...6).contains(benAcks), "ben acknowledged \(benAcks) times in 5 s")
        #expect(longestOwed <= 1_100 * Self.ms, "ana waited \(longestOwed / Self.ms) ms")
        #expect(world.counts[.linkPing(ana)] ?? 0 == 0, "ana hears the relay's acknowledgements")
        #expect(world.counts[.linkPing(ben)] ?? 0 == 0)
        #expect(world.quiet.isEmpty)
        #expect(world.maximumUnacknowledged[ana] ?? .max <= 11)
    }

    @Test("two ways: every acknowledgement rides on a frame going that way, none in a write of its own, and few are owed")
    func twoWaysPiggyback() {
        var world = LinkWorld()
        let ana = world.add("ana", create: true)
        let ben = world.add("ben", create: false)
        world.join(ana)
        world.join(ben)
        _ = world.advance(by: 2_000 * Self.ms)
        let start = world.now
        var largestOutbox = 0
        // The first second is the traffic's start: an acknowledgement owed for what came before
        // it, or due before the other side's first frame, may still go alone. Counted after it.
        while world.now < start + 6_000 * Self.ms {
            let elapsed = world.now - start
            if elapsed == 1_000 * Self.ms { world.counts = [:] }
            if elapsed % (100 * Self.ms) == 0 { world.send(from: ana, [1]) }
            if elapsed % (100 * Self.ms) == 50 * Self.ms { world.send(from: ben, [2]) }
            _ = world.advance(by: 10 * Self.ms)
            largestOutbox = max(largestOutbox, world.relayOutbox(of: ana), world.relayOutbox(of: ben))
        }
        #expect(world.messages[ana] == 60 && world.messages[ben] == 60)
        for who in [ana, ben] {
            #expect(world.counts[.relayAckAlone(who)] ?? 0 == 0, "\(world.counts)")
            #expect(world.counts[.linkAckAlone(who)] ?? 0 == 0, "\(world.counts)")
            // A quarter of a second apart at least, and riding on the next frame after it.
            #expect((12...21).contains(world.counts[.relayAck(who)] ?? 0), "\(world.counts)")
            #expect((12...21).contains(world.counts[.linkAck(who)] ?? 0), "\(world.counts)")
            #expect(world.maximumUnacknowledged[who] ?? .max <= 5)
        }
        #expect(largestOutbox <= 5, "the relay keeps at most \(largestOutbox) frames for a resumption")
        #expect(world.quiet.isEmpty)
    }

    @Test("a message every 1.2 s: the relay is never quiet to the sender, which pings when the acknowledgement it waits for would come too late")
    func sparseSenderIsNeverQuiet() {
        var world = LinkWorld()
        let ana = world.add("ana", create: true)
        let ben = world.add("ben", create: false)
        world.join(ana)
        world.join(ben)
        world.counts = [:]
        let start = world.now
        while world.now < start + 12_000 * Self.ms {
            if (world.now - start) % (1_200 * Self.ms) == 0 { world.send(from: ana, [4]) }
            _ = world.advance(by: 10 * Self.ms)
        }
        #expect(world.messages[ben] == 10)
        #expect(world.quiet.isEmpty, "told quiet: \(world.quiet)")
        #expect(world.closed.isEmpty)
    }

    @Test("a lone message after a quiet spell is acknowledged within the interval by a frame of its own, each way, and nothing more goes")
    func loneMessageIsAcknowledgedWithinTheInterval() throws {
        var world = LinkWorld()
        let ana = world.add("ana", create: true)
        let ben = world.add("ben", create: false)
        world.join(ana)
        world.join(ben)
        _ = world.advance(by: 3_000 * Self.ms)
        world.counts = [:]
        let sent = world.now
        world.send(from: ana, [7])
        _ = world.advance(by: 3_000 * Self.ms)
        let relayAcked = try #require(world.lastRelayAck[ana]) - sent
        let benAcked = try #require(world.lastLinkAck[ben]) - sent
        #expect(relayAcked > 0 && relayAcked <= 1_010 * Self.ms, "\(relayAcked / Self.ms) ms")
        #expect(benAcked > 0 && benAcked <= 1_010 * Self.ms, "\(benAcked / Self.ms) ms")
        #expect(world.counts[.relayAck(ana)] == 1 && world.counts[.relayAckAlone(ana)] == 1)
        #expect(world.counts[.linkAck(ben)] == 1 && world.counts[.linkAckAlone(ben)] == 1)
        #expect(world.links[ana].core.unacknowledgedCount == 0)
        #expect(world.relayOutbox(of: ben) == 0)
    }

    @Test("pressing: 64 frames, or a mebibyte in fewer, are acknowledged at once")
    func pressingIsAcknowledgedAtOnce() {
        var core = RelayCore()
        let one = RelayConnectionID(1)
        let ana = TestIdentities.make()
        _ = CoreAdmission(key: key, session: session).admit(&core, one, ana, create: true, at: 0)
        let body = [UInt8](repeating: 3, count: 256 * 1024)
        var acknowledged: [UInt64] = []
        for sequence in UInt64(1)...4 {
            let directives = core.onFrame(.message(sequence: sequence, recipients: .everyone, reliable: true, body: body), from: one, at: 10 * Self.ms)
            acknowledged += CoreAdmission.frames(directives, to: one).compactMap { if case let .ack(through) = $0 { through } else { nil } }
        }
        #expect(acknowledged == [4], "four quarter-mebibyte bodies make a mebibyte")
        for sequence in UInt64(5)...68 {
            let directives = core.onFrame(.message(sequence: sequence, recipients: .everyone, reliable: true, body: [1]), from: one, at: 20 * Self.ms)
            acknowledged += CoreAdmission.frames(directives, to: one).compactMap { if case let .ack(through) = $0 { through } else { nil } }
        }
        #expect(acknowledged == [4, 68])
    }

    @Test("a ping is answered with what the relay owes, in the same pass; with nothing owed, the pong alone")
    func pingCarriesTheOwedAcknowledgement() {
        var core = RelayCore()
        let one = RelayConnectionID(1)
        let ana = TestIdentities.make()
        _ = CoreAdmission(key: key, session: session).admit(&core, one, ana, create: true, at: 0)
        _ = core.onFrame(.message(sequence: 1, recipients: .everyone, reliable: true, body: [1]), from: one, at: 5 * Self.ms)
        let answered = CoreAdmission.frames(core.onFrame(.ping(9), from: one, at: 6 * Self.ms), to: one)
        #expect(answered == [.pong(9), .ack(1)])
        #expect(CoreAdmission.frames(core.onFrame(.ping(10), from: one, at: 7 * Self.ms), to: one) == [.pong(10)])
        // Nothing is left for the tick.
        var later: [RelayFrame] = []
        for step in 1...30 { later += CoreAdmission.frames(core.onTick(at: Int64(step) * 100 * Self.ms), to: one) }
        #expect(!later.contains { if case .ack = $0 { true } else { false } })
    }

    @Test("a link owed an acknowledgement does not ping a silent relay until it is late, then does")
    func linkWaitsForTheOwedAcknowledgement() throws {
        var world = LinkWorld()
        let ana = world.add("ana", create: true)
        let ben = world.add("ben", create: false)
        world.join(ana)
        world.join(ben)
        _ = world.advance(by: 2_000 * Self.ms)
        // Ana hears the relay (ben's message), then sends, and the relay goes silent.
        world.send(from: ben, [2])
        world.relaySilent = true
        world.counts = [:]
        let sent = world.now
        world.send(from: ana, [1])
        var firstPing: Int64?
        while firstPing == nil, world.now < sent + 3_000 * Self.ms {
            _ = world.advance(by: 10 * Self.ms)
            if world.counts[.linkPing(ana)] ?? 0 > 0 { firstPing = world.now }
        }
        let waited = try #require(firstPing) - sent
        let wait = RelayLinkConfiguration().acknowledgementWait
        #expect(waited >= wait && waited <= wait + 20 * Self.ms, "pinged \(waited / Self.ms) ms after sending")
    }
}
