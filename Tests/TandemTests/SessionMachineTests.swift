import Foundation
import Testing
@testable import Tandem
import TandemClock
import TandemNet
import TandemWire

/// A session's participants as the relay and the machine see them, for the session machine's
/// tests: each with its own key, all with the session's secret, and a clock that moves only when
/// the test says so.
struct MachineGroup {
    let secret = SessionSecret()
    let sessionID = UUID()
    var now = LocalInstant(nanoseconds: 1_000_000_000)
    private var order: UInt64 = 0

    /// A participant's key for the session.
    func member() -> BodySealer {
        BodySealer(secret: secret, sessionID: sessionID, identity: SigningKeyPair())
    }

    /// The relay's record of `member`, with its signed presence as `name`.
    func record(_ member: BodySealer, _ name: String, departed: Bool = false) -> ParticipantRecord {
        ParticipantRecord(id: member.localID, publicKey: member.identity.publicKey, displayName: name,
                          presence: member.keptPresence(name: name), departed: departed)
    }

    /// A machine for `member` named `name`.
    func machine(_ member: BodySealer, _ name: String, initiated: Bool) -> SessionMachine<Quiz> {
        SessionMachine(localParticipant: Participant(id: member.localID, displayName: name), bodies: member,
                       isLocallyInitiated: initiated)
    }

    /// The welcome a joiner gets: `participants`, the activity `host` signed, and `history`.
    func welcome(_ participants: [ParticipantRecord], host: BodySealer, topic: String = "rivers",
                 attachments: [AttachmentRecord] = [], history: [OrderedDelivery] = []) throws -> RelayWelcome {
        RelayWelcome(sessionID: sessionID, participants: participants, activity: try ActivityDescription(Quiz(topic: topic)).sealed(with: host),
                     attachments: attachments, created: false, orderedHistory: history)
    }

    /// The next ordered delivery: `payload` signed by `member` as `kind`.
    mutating func ordered(_ payload: [UInt8], by member: BodySealer, kind: BodyKind = .playbackProposal,
                          retention: OrderedRetention = .kept) -> OrderedDelivery {
        order += 1
        return OrderedDelivery(sender: member.localID, order: order, orderedAt: now.nanoseconds, effectiveAt: now.nanoseconds,
                               retention: retention, body: member.seal(payload, kind: kind, path: .ordered, retention: retention))
    }

    /// A chat line `text` from `member`, in the order.
    mutating func chat(_ text: String, by member: BodySealer) throws -> OrderedDelivery {
        ordered(try ChatRecord.encode(text), by: member, kind: .chat, retention: .recent(count: UInt16(ChatMessage.keptCount)))
    }

    /// A message of route `type` from `member`, sealed for everyone.
    func message(_ type: String, _ payload: [UInt8], from member: BodySealer, reliable: Bool = true) -> RelayEvent {
        .message(from: member.localID, body: member.seal(SessionEnvelope.message(type: type, payload: payload).encoded, kind: .message,
                                                         path: reliable ? .reliable : .unreliable),
                 reliable: reliable)
    }

    /// `member`'s presence as it sends it on joining.
    func presence(_ member: BodySealer, _ name: String) -> RelayEvent {
        .message(from: member.localID, body: member.seal(SessionEnvelope.presence(name: name).encoded, kind: .presence, path: .reliable),
                 reliable: true)
    }

    /// An attachment named `name` added by `member`.
    func attachment(_ name: String, by member: BodySealer) throws -> AttachmentRecord {
        let id = UUID()
        let metadata = AttachmentMetadata(name: name, size: 3, contentType: UTType.plainText.identifier, metadata: nil)
        return AttachmentRecord(id: id, owner: member.localID, size: 3,
                                metadata: member.seal(Array(try JSONEncoder().encode(metadata)), kind: .attachmentMetadata,
                                                      path: .journal, attachment: id))
    }

    /// Moves the clock on.
    mutating func advance(_ span: TimeSpan) { now += span }
}

/// A host and a joined guest, as most tests start.
struct JoinedMachine {
    var group = MachineGroup()
    let host: BodySealer
    let ana: BodySealer
    var machine: SessionMachine<Quiz>

    /// `ana` joined the host's session from an invite; the host is in it.
    init() throws {
        host = group.member()
        ana = group.member()
        machine = group.machine(ana, "ana", initiated: false)
        _ = machine.onWelcome(try group.welcome([group.record(host, "host"), group.record(ana, "ana")], host: host), at: group.now)
        _ = machine.onJoinRequested(at: group.now)
        _ = machine.onAnnounce(at: group.now)
        _ = machine.onRelayEvent(group.presence(host, "host"), at: group.now)
    }

    mutating func on(_ event: RelayEvent) -> [SessionMachine<Quiz>.EventDirective] {
        machine.onRelayEvent(event, at: group.now)
    }
}

/// The session machine's decisions on virtual time: joins and welcomes, presences and away,
/// departures, a late joiner's state, ordered delivery and duplicates, messages, the journal,
/// resumption and the end; each fed exactly what the relay would report, with real seals.
@Suite struct SessionMachineTests {
    @Test func aHostJoinsOnceConnectsThenAnnouncesItself() throws {
        var group = MachineGroup()
        let host = group.member()
        var machine = group.machine(host, "host", initiated: true)
        #expect(machine.initiator == host.localID)
        #expect(!machine.isJoined)
        // Announcing before any link is had does nothing.
        #expect(machine.onAnnounce(at: group.now).isEmpty)
        #expect(machine.onJoinRequested(at: group.now) == [.prepare(connect: true)])
        // A second request changes nothing.
        #expect(machine.onJoinRequested(at: group.now).isEmpty)
        #expect(machine.phase == .joining)
        _ = machine.onWelcome(try group.welcome([group.record(host, "host")], host: host), at: group.now)
        group.advance(.milliseconds(5))
        let announced = machine.onAnnounce(at: group.now)
        let me = Participant(id: host.localID, displayName: "host")
        #expect(announced == [.sendPresence(to: .everyone), .publishActive([me]), .publishJoined])
        #expect(machine.isJoined)
        #expect(machine.joinedAt == group.now)
        #expect(machine.initiator == host.localID, "a welcome does not make someone else the initiator of one's own session")
    }

    @Test func aJoinerLearnsWhoIsThereWhoLeftAndWhoStartedIt() throws {
        let group = MachineGroup()
        let host = group.member()
        let gone = group.member()
        let ana = group.member()
        var machine = group.machine(ana, "ana", initiated: false)
        #expect(machine.initiator == nil)
        let welcome = try group.welcome([group.record(gone, "gone", departed: true), group.record(host, "host"), group.record(ana, "ana")],
                                        host: host)
        #expect(machine.onWelcome(welcome, at: group.now).isEmpty)
        #expect(machine.initiator == host.localID)
        #expect(machine.known[host.localID]?.displayName == "host")
        #expect(machine.known[gone.localID] == nil)
        #expect(machine.participant(identifiedBy: gone.localID)?.displayName == "gone")
        // Accepted with a link: joining needs no connection.
        #expect(machine.onJoinRequested(at: group.now) == [.prepare(connect: false)])
        // Not active until announced: nobody is, as far as this participant knows.
        #expect(machine.activeParticipants.isEmpty)
        _ = machine.onAnnounce(at: group.now)
        #expect(machine.activeParticipants.map(\.displayName) == ["ana"])
    }

    @Test func presencesMakeParticipantsActiveUnderTheirSignedNames() throws {
        var joined = try JoinedMachine()
        let ben = joined.group.member()
        // The relay says ben joined: this joined participant tells him it is there.
        let told = joined.on(.participantJoined(joined.group.record(ben, "ben (relay's word)")))
        #expect(told.count == 1)
        guard case .sendPresence(let recipients)? = told.first else { Issue.record("no presence for the newcomer"); return }
        #expect(recipients == .only([ben.localID]))
        // Joined with the relay, but not in the activity until his presence arrives.
        #expect(!joined.machine.activeParticipants.contains { $0.id == ben.localID })
        let active = joined.on(joined.group.presence(ben, "ben"))
        guard case .publishActive(let set)? = active.first else { Issue.record("active not published"); return }
        #expect(Set(set.map(\.displayName)) == ["host", "ana", "ben"])
        #expect(joined.machine.known[ben.localID]?.displayName == "ben")
    }

    @Test func aForgedIdentityOrPresenceIsRejectedAndNotBelieved() throws {
        var joined = try JoinedMachine()
        let ben = joined.group.member()
        let mallory = joined.group.member()
        // An identity that is not the key's.
        var forged = joined.group.record(ben, "ben")
        forged.publicKey = mallory.identity.publicKey
        let out = joined.on(.participantJoined(forged))
        #expect(out.contains { if case .reject(let r) = $0 { r.reason == .forgedIdentity } else { false } })
        #expect(joined.machine.known[ben.localID] == nil)
        // A presence signed by someone else: the participant goes by its identity alone.
        var lying = joined.group.record(ben, "ben")
        lying.presence = mallory.keptPresence(name: "the host")
        _ = joined.on(.participantJoined(lying))
        #expect(joined.machine.known[ben.localID]?.displayName == "")
        #expect(joined.machine.rejected[.forgedIdentity] == 1)
        #expect(joined.machine.rejected[.wrongSender] == 1)
    }

    @Test func awayIsToldOnceAChangeAndEndsWithTheDeparture() throws {
        var joined = try JoinedMachine()
        let host = joined.host
        let away = joined.on(.participantAway(host.localID, away: true))
        guard case .publishAway(let set)? = away.first else { Issue.record("away not published"); return }
        #expect(set.map(\.displayName) == ["host"])
        #expect(joined.machine.awaySince[host.localID] == joined.group.now)
        joined.group.advance(.seconds(1))
        // Told again: no change, nothing published, and the instant it went away stands.
        #expect(joined.on(.participantAway(host.localID, away: true)).isEmpty)
        #expect(joined.machine.awaySince[host.localID] == joined.group.now - .seconds(1))
        // Back.
        let back = joined.on(.participantAway(host.localID, away: false))
        guard case .publishAway(let none)? = back.first else { Issue.record("return not published"); return }
        #expect(none.isEmpty)
        // Away again, then gone for good: away and active both lose it, and readers hear it.
        _ = joined.on(.participantAway(host.localID, away: true))
        let left = joined.on(.participantLeft(host.localID))
        #expect(left.count == 3)
        if case .publishAway(let after)? = left.first { #expect(after.isEmpty) } else { Issue.record("away not cleared") }
        if case .publishActive(let active) = left[1] { #expect(active.map(\.displayName) == ["ana"]) } else { Issue.record("active not published") }
        if case .announceDeparture(let id) = left[2] { #expect(id == host.localID) } else { Issue.record("departure not announced") }
        // Still named: it may have signed records this participant receives.
        #expect(joined.machine.participant(identifiedBy: host.localID)?.displayName == "host")
        #expect(!joined.machine.isInvalidated)
    }

    @Test func theInitiatorsDepartureEndsAnActivityThatEndsWithIt() throws {
        var joined = try JoinedMachine()
        joined.machine.onLifetimePolicy(.endsWhenInitiatorLeaves)
        let out = joined.on(.participantLeft(joined.host.localID))
        guard case .invalidate(let reason)? = out.last else { Issue.record("not invalidated"); return }
        #expect(reason.code == .ended)
        #expect(reason.detail.contains("host"))
        #expect(joined.machine.isInvalidated)
        // Nothing more is decided once over.
        #expect(joined.on(joined.group.presence(joined.host, "host")).isEmpty)
    }

    @Test func aLateJoinerGetsTheActivityTheChatTheJournalAndTheHistoryInOrder() throws {
        var group = MachineGroup()
        let host = group.member()
        let ben = group.member()
        let late = group.member()
        let history = [
            group.ordered(try ActivityChange.encode(Quiz(topic: "lakes")), by: host),
            try group.chat("hello", by: ben),
            group.ordered(Array("proposal".utf8), by: host),
            group.ordered(Array("relabelled".utf8), by: ben, kind: .playbackSnapshot, retention: .snapshot(reflecting: 2)),
        ]
        // The relay relabels the last one's retention: it must stay a placeholder with its order.
        var tampered = history
        tampered[3].retention = .kept
        let attachment = try group.attachment("notes.txt", by: ben)
        var machine = group.machine(late, "late", initiated: false)
        let out = machine.onWelcome(try group.welcome([group.record(host, "host"), group.record(ben, "ben"), group.record(late, "late")],
                                                      host: host, attachments: [attachment], history: tampered), at: group.now)
        #expect(out.contains { if case .showActivity(let quiz) = $0 { quiz == Quiz(topic: "lakes") } else { false } })
        #expect(out.contains { if case .chat(let line) = $0 { line.text == "hello" && line.sender == ben.localID } else { false } })
        #expect(out.contains { if case .publishJournal(let entries) = $0 { entries.map(\.name) == ["notes.txt"] } else { false } })
        #expect(machine.chat.map(\.text) == ["hello"])
        #expect(machine.rejected[.wrongRetention] == 1)
        // Nobody reads the records yet: they wait, in order, placeholders included.
        #expect(!out.contains { if case .deliverOrdered = $0 { true } else { false } })
        let taken = machine.onOrderedReader()
        let backlog = try #require(taken)
        #expect(backlog.map(\.order) == [1, 2, 3, 4])
        #expect(backlog[2].body == .plaintext(Array("proposal".utf8)))
        #expect(backlog[3].body == .placeholder(.wrongRetention))
        #expect(machine.orderedBacklog.isEmpty)
        // From now on each record goes to the reader as it comes.
        let next = machine.onRelayEvent(.ordered(group.ordered(Array("next".utf8), by: ben)), at: group.now)
        guard case .deliverOrdered(let record)? = next.first else { Issue.record("not delivered"); return }
        #expect(record.order == 5)
        #expect(record.sender == ben.localID)
    }

    @Test func orderedDuplicatesAndReplaysAreCaught() throws {
        var joined = try JoinedMachine()
        _ = joined.machine.onOrderedReader()
        let first = joined.group.ordered(Array("one".utf8), by: joined.host)
        #expect(joined.on(.ordered(first)).count == 1)
        // The same order again: a duplicate, reported, not passed on.
        let again = joined.on(.ordered(first))
        #expect(again.count == 1)
        if case .reject(let rejection)? = again.first { #expect(rejection.reason == .replayed) } else { Issue.record("duplicate passed") }
        // The same body under a fresh order: a replay, passed on as a placeholder holding its order.
        var replay = first
        replay.order = 2
        let replayed = joined.on(.ordered(replay))
        guard case .deliverOrdered(let record)? = replayed.last else { Issue.record("order lost"); return }
        #expect(record.order == 2)
        #expect(record.body == .placeholder(.replayed))
        #expect(joined.machine.rejected[.replayed] == 2)
    }

    @Test func chainHeadsShowWhenTheRelayGaveTwoParticipantsDifferentRecordsUnderOneOrder() throws {
        var joined = try JoinedMachine()
        // Ben, in the same session, with a machine of his own.
        let ben = joined.group.member()
        var benMachine = joined.group.machine(ben, "ben", initiated: false)
        _ = benMachine.onWelcome(try joined.group.welcome([joined.group.record(joined.host, "host"), joined.group.record(joined.ana, "ana"),
                                                           joined.group.record(ben, "ben")], host: joined.host), at: joined.group.now)
        let first = joined.group.ordered(Array("play".utf8), by: joined.host)
        _ = joined.on(.ordered(first))
        _ = benMachine.onRelayEvent(.ordered(first), at: joined.group.now)
        #expect(joined.machine.chain.head(atOrder: 1) != nil)
        #expect(joined.machine.chain.head(atOrder: 1) == benMachine.chain.head(atOrder: 1))

        // Order 2: the relay gives Ana the host's pause and Ben the host's seek, both really signed.
        let pause = joined.group.ordered(Array("pause".utf8), by: joined.host)
        var seek = joined.group.ordered(Array("seek".utf8), by: joined.host)
        seek.order = pause.order
        _ = joined.on(.ordered(pause))
        _ = benMachine.onRelayEvent(.ordered(seek), at: joined.group.now)
        #expect(joined.machine.chain.head(atOrder: 2) != benMachine.chain.head(atOrder: 2))
        #expect(joined.machine.chain.tip?.order == 2)

        // A late joiner given Ana's history holds Ana's heads, order for order.
        let cy = joined.group.member()
        var late = joined.group.machine(cy, "cy", initiated: false)
        _ = late.onWelcome(try joined.group.welcome([joined.group.record(joined.host, "host"), joined.group.record(cy, "cy")],
                                                    host: joined.host, history: [first, pause]), at: joined.group.now)
        #expect(late.chain.head(atOrder: 1) == joined.machine.chain.head(atOrder: 1))
        #expect(late.chain.head(atOrder: 2) == joined.machine.chain.head(atOrder: 2))
    }

    @Test func ownActivityChangesStandUntilTheyComeBackInOrder() throws {
        var joined = try JoinedMachine()
        var waiting = joined.group.machine(joined.group.member(), "w", initiated: false)
        #expect(waiting.onActivityAssigned() == .keepLocally)
        #expect(joined.machine.onActivityAssigned() == .propose)
        #expect(joined.machine.pendingActivityChanges == 1)
        // The host's change was ordered before ana's: not shown over hers.
        let hosts = joined.on(.ordered(joined.group.ordered(try ActivityChange.encode(Quiz(topic: "host's")), by: joined.host)))
        #expect(!hosts.contains { if case .showActivity = $0 { true } else { false } })
        // Hers comes back: the last in order is shown.
        let hers = joined.on(.ordered(joined.group.ordered(try ActivityChange.encode(Quiz(topic: "ana's")), by: joined.ana)))
        #expect(hers.contains { if case .showActivity(let quiz) = $0 { quiz.topic == "ana's" } else { false } })
        #expect(joined.machine.pendingActivityChanges == 0)
        // A change that could not be sent is forgotten.
        #expect(joined.machine.onActivityAssigned() == .propose)
        joined.machine.onActivityProposalFailed()
        #expect(joined.machine.pendingActivityChanges == 0)
    }

    @Test func messagesGoToTheirRouteFromKnownSendersOnce() throws {
        var joined = try JoinedMachine()
        let event = joined.group.message("Answer", Array("{}".utf8), from: joined.host)
        let out = joined.on(event)
        guard case .deliver(let inbound, let route)? = out.first else { Issue.record("not delivered"); return }
        #expect(route == "Answer")
        #expect(inbound.source.displayName == "host")
        // The same body again is a replay.
        if case .reject(let rejection)? = joined.on(event).first { #expect(rejection.reason == .replayed) } else { Issue.record("replay delivered") }
        // A sender the relay never announced is not delivered.
        let stranger = joined.group.member()
        #expect(joined.on(joined.group.message("Answer", [], from: stranger)).isEmpty)
        // A message on the media stream's route is no message.
        if case .reject(let rejection)? = joined.on(joined.group.message(sessionStreamRoute, [], from: joined.host)).first {
            #expect(rejection.reason == .wrongKind)
        } else {
            Issue.record("a message on the stream's route went through")
        }
        // Attributed by the relay to someone else than its signer.
        let host = joined.host
        let misattributed = RelayEvent.message(from: joined.ana.localID, body: host.seal(SessionEnvelope.message(type: "Answer", payload: []).encoded,
                                                                                          kind: .message, path: .reliable), reliable: true)
        if case .reject(let rejection)? = joined.on(misattributed).first { #expect(rejection.reason == .wrongSender) } else { Issue.record("misattributed delivered") }
        // Unreliable messages arrive too.
        if case .deliver(_, let route)? = joined.on(joined.group.message("Tick", [1], from: host, reliable: false)).first {
            #expect(route == "Tick")
        } else {
            Issue.record("unreliable message lost")
        }
    }

    @Test func theJournalFollowsAddsAndRemovals() throws {
        var joined = try JoinedMachine()
        let first = try joined.group.attachment("a.txt", by: joined.host)
        let second = try joined.group.attachment("b.txt", by: joined.ana)
        _ = joined.on(.attachmentAdded(first))
        _ = joined.on(.attachmentAdded(second))
        #expect(joined.machine.journal.map(\.name) == ["a.txt", "b.txt"])
        #expect(joined.machine.journal.first?.contentType == .plainText)
        // Metadata signed by someone other than the owner the relay names.
        var stolen = second
        stolen.owner = joined.host.localID
        stolen.id = UUID()
        if case .reject(let rejection)? = joined.on(.attachmentAdded(stolen)).first {
            #expect(rejection.reason == .wrongSender || rejection.reason == .wrongKind)
        } else {
            Issue.record("a stolen attachment was taken")
        }
        let removed = joined.on(.attachmentRemoved(first.id))
        if case .publishJournal(let entries)? = removed.first { #expect(entries.map(\.name) == ["b.txt"]) } else { Issue.record("removal not published") }
    }

    @Test func aReconnectionIsToldAndTheClockFollowsTheResumedLink() throws {
        var joined = try JoinedMachine()
        let interrupted = joined.on(.connectionInterrupted)
        if case .publishAvailability(let availability)? = interrupted.first {
            #expect(availability == .unavailable(reason: RelayAvailability.reconnecting))
        } else {
            Issue.record("interruption not told")
        }
        // Quiet as well: already told.
        #expect(joined.on(.connectionQuiet).isEmpty)
        joined.group.advance(.milliseconds(300))
        let resumed = joined.on(.connectionResumed)
        #expect(resumed.count == 2)
        if case .followClock? = resumed.first {} else { Issue.record("the clock does not follow") }
        if case .publishAvailability(let availability) = resumed[1] { #expect(availability == .available) } else { Issue.record("resumption not told") }
        #expect(joined.machine.resumedAt == joined.group.now)
        // A relay that cannot order stays unavailable across a resumption: it says when it can.
        _ = joined.on(.relayAvailability(available: false, reason: "NATS is down"))
        _ = joined.on(.connectionResumed)
        #expect(joined.machine.relayAvailability == .unavailable(reason: "NATS is down"))
        _ = joined.on(.relayAvailability(available: true, reason: ""))
        #expect(joined.machine.relayAvailability == .available)
        // Records resume where they were: no order is taken twice.
        _ = joined.machine.onOrderedReader()
        _ = joined.on(.ordered(joined.group.ordered([1], by: joined.host)))
        #expect(joined.machine.lastOrder == 1)
    }

    @Test func theEndInvalidatesOnceWithItsReason() throws {
        var joined = try JoinedMachine()
        let ended = joined.on(.ended(by: joined.host.localID, reason: ""))
        guard case .invalidate(let reason)? = ended.first else { Issue.record("not invalidated"); return }
        #expect(reason.code == .ended)
        #expect(reason.detail == "host ended the session")
        #expect(joined.machine.activeParticipants.isEmpty)
        #expect(joined.machine.onLeaveRequested(at: joined.group.now).isEmpty)
        #expect(joined.machine.onActivityAssigned() == .ignore)
        #expect(joined.machine.onOrderedReader() == nil)
        // A failed link ends it too, as a relay error.
        var other = try JoinedMachine()
        if case .invalidate(let failure)? = other.on(.failed(RelayError(.closed, "gone"))).first {
            #expect(failure.code == .relay)
        } else {
            Issue.record("a failed link did not end the session")
        }
    }

    @Test func leavingTellsTheRelayOrEndsForEveryoneWhenTheInitiatorGoes() throws {
        var joined = try JoinedMachine()
        let leave = joined.machine.onLeaveRequested(at: joined.group.now)
        #expect(leave.count == 2)
        if case .invalidate(let reason)? = leave.first { #expect(reason.code == .left) } else { Issue.record("not invalidated") }
        #expect(leave.last == .leaveRelay)
        #expect(!joined.machine.isJoined)
        // A host whose activity ends with it ends the session for everyone.
        var group = MachineGroup()
        let host = group.member()
        var machine = group.machine(host, "host", initiated: true)
        _ = machine.onJoinRequested(at: group.now)
        machine.onLifetimePolicy(.endsWhenInitiatorLeaves)
        _ = machine.onWelcome(try group.welcome([group.record(host, "host")], host: host), at: group.now)
        _ = machine.onAnnounce(at: group.now)
        group.advance(.seconds(2))
        let ends = machine.onLeaveRequested(at: group.now)
        guard case .endRelay(let reason)? = ends.last else { Issue.record("the relay is not told"); return }
        #expect(reason.contains("who started it, left"))
        // Leaving before any link: nothing to tell the relay.
        var unlinked = group.machine(group.member(), "solo", initiated: false)
        #expect(unlinked.onLeaveRequested(at: group.now).count == 1)
    }
}
