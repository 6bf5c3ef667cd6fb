import Foundation
import Testing
@testable import Tandem
import TandemClock
import TandemNet
import TandemWire

/// What a malicious relay can no longer do, decided where the checks live: each participant's
/// session machine, fed exactly what a relay that replays, re-routes and re-attributes sealed
/// bodies would hand its link, with real seals and signatures. Each forgery is dropped on
/// arrival, counted by reason and reported; nothing forged is delivered, and the session goes on.
/// (`HostileRelayProcessTests` runs a hostile proxy in front of `tandem serve` for the wiring.)
@Suite struct HostileRelayMachineTests {
    /// Ana, who started the session, Ben and Carl: one machine each for Ben and Carl, joined and
    /// knowing the others by their signed presences.
    struct Trio {
        var group = MachineGroup()
        let ana: BodySealer
        let ben: BodySealer
        let carl: BodySealer
        var benMachine: SessionMachine<Quiz>
        var carlMachine: SessionMachine<Quiz>

        init() throws {
            ana = group.member()
            ben = group.member()
            carl = group.member()
            let records = [group.record(ana, "ana"), group.record(ben, "ben"), group.record(carl, "carl")]
            let welcome = try group.welcome(records, host: ana)
            var machines: [SessionMachine<Quiz>] = []
            for (member, name, others) in [(ben, "ben", [(ana, "ana"), (carl, "carl")]), (carl, "carl", [(ana, "ana"), (ben, "ben")])] {
                var machine = group.machine(member, name, initiated: false)
                _ = machine.onWelcome(welcome, at: group.now)
                _ = machine.onJoinRequested(at: group.now)
                _ = machine.onAnnounce(at: group.now)
                for (other, otherName) in others { _ = machine.onRelayEvent(group.presence(other, otherName), at: group.now) }
                _ = machine.onOrderedReader()
                machines.append(machine)
            }
            benMachine = machines[0]
            carlMachine = machines[1]
        }
    }

    /// What one participant's machine did with what its link handed it.
    struct Outcome {
        var delivered: [(text: String, source: UUID)] = []
        var ordered: [OrderedRecord] = []
        var rejections: [Rejection] = []

        mutating func take(_ directives: [SessionMachine<Quiz>.EventDirective]) {
            for directive in directives {
                switch directive {
                case .deliver(let inbound, let route):
                    #expect(route == "Answer")
                    let answer = try? JSONDecoder().decode(Answer.self, from: Data(inbound.payload))
                    delivered.append((answer?.text ?? "?", inbound.source.id))
                case .deliverOrdered(let record): ordered.append(record)
                case .reject(let rejection): rejections.append(rejection)
                default: break
                }
            }
        }
    }

    /// `text` from `member` as the `Answer` route's message, sealed for `recipients` on `path`.
    static func answer(_ text: String, question: Int, from member: BodySealer, to recipients: Recipients = .everyone) throws -> [UInt8] {
        let payload = Array(try JSONEncoder().encode(Answer(question: question, text: text)))
        return member.seal(SessionEnvelope.message(type: "Answer", payload: payload).encoded, kind: .message, path: .reliable, to: recipients)
    }

    @Test func replayedReroutedAndReattributedBodiesAreDroppedAndCounted() throws {
        var trio = try Trio()
        var ben = Outcome()
        var carl = Outcome()
        let now = trio.group.now
        let (anaID, carlID) = (trio.ana.localID, trio.carl.localID)

        // Re-routed: a message Ana meant for Carl alone, delivered to Ben too.
        let forCarl = try Self.answer("for carl", question: 1, from: trio.ana, to: .only([carlID]))
        carl.take(trio.carlMachine.onRelayEvent(.message(from: anaID, body: forCarl, reliable: true), at: now))
        ben.take(trio.benMachine.onRelayEvent(.message(from: anaID, body: forCarl, reliable: true), at: now))
        #expect(ben.rejections.map(\.reason) == [.notRecipient])

        // Replayed and re-attributed: a message to everyone, delivered to Ben again, and again
        // under Carl's name; and on the unreliable path, which is another path.
        let forAll = try Self.answer("for all", question: 2, from: trio.ana)
        carl.take(trio.carlMachine.onRelayEvent(.message(from: anaID, body: forAll, reliable: true), at: now))
        ben.take(trio.benMachine.onRelayEvent(.message(from: anaID, body: forAll, reliable: true), at: now))
        #expect(ben.delivered.map(\.text) == ["for all"])
        ben.take(trio.benMachine.onRelayEvent(.message(from: anaID, body: forAll, reliable: true), at: now))
        ben.take(trio.benMachine.onRelayEvent(.message(from: carlID, body: forAll, reliable: true), at: now))
        ben.take(trio.benMachine.onRelayEvent(.message(from: anaID, body: forAll, reliable: false), at: now))
        #expect(ben.rejections.map(\.reason) == [.notRecipient, .replayed, .wrongSender, .wrongKind])

        // An ordered proposal replayed with a fresh order number, and one re-attributed to Carl:
        // each holds its order as a placeholder, so that versions stay aligned.
        let entry = trio.group.ordered(Array("seek 0".utf8), by: trio.ana)
        ben.take(trio.benMachine.onRelayEvent(.ordered(entry), at: now))
        ben.take(trio.benMachine.onRelayEvent(.ordered(OrderedDelivery(
            sender: entry.sender, order: entry.order + 1, orderedAt: entry.orderedAt + 1, effectiveAt: entry.effectiveAt + 1,
            retention: entry.retention, body: entry.body)), at: now))
        ben.take(trio.benMachine.onRelayEvent(.ordered(OrderedDelivery(
            sender: carlID, order: entry.order + 2, orderedAt: entry.orderedAt + 2, effectiveAt: entry.effectiveAt + 2,
            retention: entry.retention, body: entry.body)), at: now))

        // Nothing forged was delivered; what was honest was, once, under its signer's name.
        #expect(ben.ordered.map(\.order) == [entry.order, entry.order + 1, entry.order + 2])
        #expect(ben.ordered.map(\.body) == [.plaintext(Array("seek 0".utf8)), .placeholder(.replayed), .placeholder(.wrongSender)])
        #expect(ben.ordered.first?.sender == anaID)
        #expect(ben.delivered.map(\.text) == ["for all"])
        #expect(ben.delivered.allSatisfy { $0.source == anaID })
        #expect(carl.delivered.map(\.text) == ["for carl", "for all"])
        #expect(carl.rejections.isEmpty)
        #expect(ben.rejections.map(\.reason) == [.notRecipient, .replayed, .wrongSender, .wrongKind, .replayed, .wrongSender])
        #expect(ben.rejections.map(\.sender) == [anaID, anaID, carlID, anaID, anaID, carlID])
        #expect(trio.benMachine.rejected[.replayed] == 2 && trio.benMachine.rejected[.wrongSender] == 2)
        #expect(trio.benMachine.rejected[.notRecipient] == 1 && trio.benMachine.rejected[.wrongKind] == 1)
        // Ben is still in the session, and what comes honestly still comes.
        #expect(trio.benMachine.isJoined)
        let stillHere = try Self.answer("still here", question: 3, from: trio.carl, to: .only([trio.ben.localID]))
        ben.take(trio.benMachine.onRelayEvent(.message(from: carlID, body: stillHere, reliable: true), at: now))
        #expect(ben.delivered.map(\.text) == ["for all", "still here"])
        #expect(ben.delivered.last?.source == carlID)
    }
}
