import Foundation
import Testing
@testable import Tandem
import TandemClock
import TandemNet
import TandemWire

/// The role records the directives ask to send.
private func recordsToSend(_ directives: [SessionMachine<Quiz>.EventDirective]) -> [RoleChange] {
    directives.compactMap { if case .sendRoleRecord(let change) = $0 { change } else { nil } }
}

/// What the machine kept of its ordered records, in order: the plaintext, or the placeholder.
private func contents(_ machine: SessionMachine<Quiz>) -> [OrderedContent] { machine.orderedBacklog.map(\.body) }

/// Removing a participant: a kick is a role record every participant judges alike; the others
/// move to a new epoch's secret, sealed to each of their keys, that the one removed never gets;
/// a late joiner holding the newest secret reads the history from before and after.
@Suite struct SessionRemovalTests {
    /// A change to the next epoch for everyone of `members` (their keys), with its secret.
    private func epochChange(_ epoch: UInt16, for members: [BodySealer]) throws -> (EpochChange, SessionSecret) {
        let secret = SessionSecret()
        let keys = Dictionary(uniqueKeysWithValues: members.map { ($0.localID, $0.identity.publicKey) })
        return (try #require(EpochChange(epoch: epoch, secret: secret, for: keys)), secret)
    }

    @Test func aKickedParticipantCannotOpenWhatFollowsWhileTheOthersDo() throws {
        var group = RoleTestGroup()
        let (host, ana, ben) = (group.member(), group.member(), group.member())
        var hostMachine = try group.joined(host, "host", creator: host, others: [(ana, "ana"), (ben, "ben")])
        var anaMachine = try group.joined(ana, "ana", creator: host, others: [(host, "host"), (ben, "ben")])
        var benMachine = try group.joined(ben, "ben", creator: host, others: [(host, "host"), (ana, "ana")])
        let before = group.ordered(Array("{\"pause\":1}".utf8), by: ana)
        let (change, secret) = try epochChange(1, for: [host, ana])
        let kick = group.role(.kick(ben.localID, change), by: host)
        var (hostOut, anaOut, benOut) = ([SessionMachine<Quiz>.EventDirective](), [SessionMachine<Quiz>.EventDirective](), [SessionMachine<Quiz>.EventDirective]())
        for record in [before, kick] {
            hostOut += hostMachine.onRelayEvent(.ordered(record), at: group.now)
            anaOut += anaMachine.onRelayEvent(.ordered(record), at: group.now)
            benOut += benMachine.onRelayEvent(.ordered(record), at: group.now)
        }
        // Ben's session is over, and says who removed him.
        #expect(benMachine.isInvalidated)
        #expect(benMachine.invalidation?.code == .removed)
        #expect(benMachine.invalidation?.detail == "removed by host")
        // The others seal under the new epoch, whose secret they opened from their own boxes.
        for bodies in [host, ana] {
            #expect(bodies.epoch == 1)
            #expect(bodies.secret(of: 1) == secret)
        }
        #expect(ben.epoch == 0)
        #expect(ben.secret(of: 1) == nil)
        #expect(!anaMachine.activeParticipants.contains { $0.id == ben.localID })
        // The operator that kicked hands on the older key, sealed in the new epoch.
        #expect(recordsToSend(hostOut) == [.epochHistory([0: group.secret])])
        // Every participant still in hands the relay the kicker's statement the record carries;
        // the one removed hands on nothing.
        let told = statements(hostOut)
        #expect(told.count == 1 && told.first?.change == .epoch(1, verifier: change.verifier, removed: ben.localID))
        #expect(told.first?.signer == host.identity.publicKey)
        #expect(statements(anaOut) == told)
        #expect(statements(benOut).isEmpty)

        // Ana says something after the kick: the others read it, Ben cannot open it.
        let after = group.ordered(Array("{\"play\":1}".utf8), by: ana)
        #expect(Sealer.epoch(of: after.body) == 1)
        _ = hostMachine.onRelayEvent(.ordered(after), at: group.now)
        #expect(contents(hostMachine).last == .plaintext(Array("{\"play\":1}".utf8)))
        let benOpens = ben.open(after.body, expecting: SessionMachine<Quiz>.expectation(ordered: after))
        #expect(benOpens == .failure(.unknownEpoch))
        // Nor can he forge its epoch byte to reach an old key.
        var relabelled = after.body
        relabelled[1] = 0
        #expect(ben.open(relabelled, expecting: SessionMachine<Quiz>.expectation(ordered: after)) == .failure(.malformed))

        // What Ben still signs under the old key is refused by everyone, ordered or not.
        let fromBen = group.ordered(Array("{\"seek\":1}".utf8), by: ben)
        _ = hostMachine.onRelayEvent(.ordered(fromBen), at: group.now)
        _ = anaMachine.onRelayEvent(.ordered(fromBen), at: group.now)
        #expect(contents(hostMachine).last == .placeholder(.removed))
        #expect(contents(anaMachine).last == .placeholder(.removed))
        let message = ben.seal(SessionEnvelope.message(type: "note", payload: Array("hi".utf8)).encoded, kind: .message, path: .reliable)
        let rejected = anaMachine.onRelayEvent(.message(from: ben.localID, body: message, reliable: true), at: group.now)
        #expect(rejected.contains { if case .reject(let rejection) = $0 { rejection.reason == .removed } else { false } })
        #expect(hostMachine.roleBook == anaMachine.roleBook)
        #expect(hostMachine.roleBook.current.isRemoved(ben.localID))
        #expect(!hostMachine.roleBook.roles(before: kick.order + 1).mayChangePlayback(ben.localID))
        #expect(hostMachine.roleBook.roles(before: kick.order).mayChangePlayback(ben.localID))
    }

    @Test func aKickFromANonOperatorIsRefusedAlikeEverywhere() throws {
        var group = RoleTestGroup()
        let (host, ana, ben) = (group.member(), group.member(), group.member())
        var machines = [
            try group.joined(host, "host", creator: host, others: [(ana, "ana"), (ben, "ben")]),
            try group.joined(ana, "ana", creator: host, others: [(host, "host"), (ben, "ben")]),
            try group.joined(ben, "ben", creator: host, others: [(host, "host"), (ana, "ana")]),
        ]
        // Ana, no operator, tries to remove Ben, then the host.
        let kicks = [group.role(.kick(ben.localID, try epochChange(1, for: [host, ana]).0), by: ana),
                     group.role(.kick(host.localID, try epochChange(1, for: [ana, ben]).0), by: ana)]
        var events: [[SessionRoleEvent]] = []
        for index in machines.indices {
            events.append(kicks.flatMap { roleEvents(machines[index].onRelayEvent(.ordered($0), at: group.now)) })
        }
        #expect(events[0] == events[1] && events[1] == events[2])
        #expect(events[0].map(\.refusal) == ["only operators may remove someone", "only operators may remove someone"])
        for (machine, bodies) in zip(machines, [host, ana, ben]) {
            #expect(!machine.isInvalidated)
            #expect(bodies.epoch == 0)
            #expect(machine.roleBook.current.removed.isEmpty)
        }
    }

    @Test func aLateJoinerWithTheNewSecretReadsTheHistoryFromBeforeAndAfterTheKick() throws {
        var group = RoleTestGroup()
        let (host, ana, ben) = (group.member(), group.member(), group.member())
        var hostMachine = try group.joined(host, "host", creator: host, others: [(ana, "ana"), (ben, "ben")])
        var anaMachine = try group.joined(ana, "ana", creator: host, others: [(host, "host"), (ben, "ben")])
        var history = [group.ordered(Array("{\"pause\":1}".utf8), by: ana), group.ordered(Array("{\"seek\":2}".utf8), by: ben)]
        let (change, secret) = try epochChange(1, for: [host, ana])
        history.append(group.role(.kick(ben.localID, change), by: host))
        var sent: [RoleChange] = []
        for record in history {
            sent += recordsToSend(hostMachine.onRelayEvent(.ordered(record), at: group.now))
            _ = anaMachine.onRelayEvent(.ordered(record), at: group.now)
        }
        // The host's follow-up, sealed under the new key, then more from Ana.
        let followUp = sent.map { group.role($0, by: host) } + [group.ordered(Array("{\"play\":3}".utf8), by: ana)]
        for record in followUp { _ = hostMachine.onRelayEvent(.ordered(record), at: group.now) }
        history += followUp
        #expect(history.map { Sealer.epoch(of: $0.body) } == [0, 0, 0, 1, 1])

        // Dan holds only the new invite's secret.
        let dan = BodySealer(secret: secret, sessionID: group.sessionID, identity: SigningKeyPair(), epoch: 1)
        let danMachine = try group.joined(dan, "dan", creator: host, others: [(host, "host"), (ana, "ana")], history: history)
        #expect(!danMachine.isInvalidated)
        #expect(dan.epoch == 1)
        #expect(dan.secret(of: 0) == group.secret)
        #expect(contents(danMachine).compactMap(\.plaintext).count == history.count)
        #expect(contents(danMachine).first == .plaintext(Array("{\"pause\":1}".utf8)))
        #expect(contents(danMachine).last == .plaintext(Array("{\"play\":3}".utf8)))
        #expect(danMachine.roleBook == hostMachine.roleBook)
        #expect(danMachine.roleBook.current.isRemoved(ben.localID))

        // Someone who holds only the old invite's secret reads nothing after the kick, and is told.
        let eve = BodySealer(secret: group.secret, sessionID: group.sessionID, identity: SigningKeyPair())
        let eveMachine = try group.joined(eve, "eve", creator: host, others: [(host, "host"), (ana, "ana")], history: history)
        #expect(eveMachine.invalidation?.code == .removed)
        #expect(eve.open(history[4].body, expecting: SessionMachine<Quiz>.expectation(ordered: history[4])) == .failure(.unknownEpoch))
    }

    @Test func aRekeyMovesEveryoneOnAndOneLeftOutOfItSaysWhy() throws {
        var group = RoleTestGroup()
        let (host, ana, cy) = (group.member(), group.member(), group.member())
        var anaMachine = try group.joined(ana, "ana", creator: host, others: [(host, "host"), (cy, "cy")])
        var cyMachine = try group.joined(cy, "cy", creator: host, others: [(host, "host"), (ana, "ana")])
        // The host's change knew of Ana alone (Cy joined as it was made).
        let (change, secret) = try epochChange(1, for: [host, ana])
        let rekey = group.role(.rekey(change), by: host)
        let events = roleEvents(anaMachine.onRelayEvent(.ordered(rekey), at: group.now))
        _ = cyMachine.onRelayEvent(.ordered(rekey), at: group.now)
        #expect(events.first?.refusal == nil)
        #expect(ana.secret(of: 1) == secret && ana.epoch == 1)
        #expect(cyMachine.invalidation?.code == .removed)
        #expect(cyMachine.invalidation?.detail == "host moved the session to a new key that this participant did not receive: ask for the new invite")
        // A second change made for the same epoch comes too late, everywhere.
        let late = group.role(.rekey(try epochChange(1, for: [host, ana]).0), by: host)
        let refusal = roleEvents(anaMachine.onRelayEvent(.ordered(late), at: group.now)).first?.refusal
        #expect(refusal == "made for epoch 1 while the session is in epoch 1 (someone changed the key first)")
        #expect(ana.secret(of: 1) == secret)
    }

    @Test func theBookRefusesEveryKickItShould() throws {
        let (ana, ben, cy) = (UUID(), UUID(), UUID())
        let next = EpochChange(epoch: 1, verifier: SessionSecret().verifier, boxes: [:])
        var book = RoleBook(creator: ana)
        #expect(book.refusal(of: .kick(ana, next), by: ana) == "an operator cannot remove itself (leave instead)")
        #expect(book.refusal(of: .kick(ben, EpochChange(epoch: 2, verifier: next.verifier, boxes: [:])), by: ana)?.hasPrefix("made for epoch 2") == true)
        #expect(book.refusal(of: .kick(ben, EpochChange(epoch: 1, verifier: next.verifier, boxes: [ben: []])), by: ana)
            == "the new key was sealed to the one removed")
        #expect(book.refusal(of: .epochHistory([:]), by: ben) == "only operators may hand on the session's older keys")
        // An operator removed loses the role; nothing it signs is taken afterwards.
        _ = book.apply(.grant(ben), by: ana, order: 1)
        #expect(book.apply(.kick(ben, next), by: ana, order: 2)?.refusal == nil)
        #expect(book.current.operators == [ana])
        #expect(book.current.epoch == 1)
        #expect(book.apply(.grant(cy), by: ben, order: 3)?.refusal == "removed from the session")
        #expect(book.apply(.grant(ben), by: ana, order: 4)?.refusal == "removed from the session")
        #expect(book.apply(.kick(ben, EpochChange(epoch: 2, verifier: next.verifier, boxes: [:])), by: ana, order: 5)?.refusal
            == "already removed")
        #expect(!book.current.mayEnd(ben))
    }

    @Test func kickRekeyAndHistoryRecordsRoundTripAndBadOnesAreNone() throws {
        let secret = SessionSecret()
        let member = SigningKeyPair()
        let id = RelayAuthenticator.participantID(for: member.publicKey)
        let change = try #require(EpochChange(epoch: 3, secret: secret, for: [id: member.publicKey]))
        #expect(change.secret(for: id, identity: member) == secret)
        // Another key opens nothing, and a box that does not match the verifier is refused.
        #expect(change.secret(for: id, identity: SigningKeyPair()) == nil)
        let forged = EpochChange(epoch: 3, verifier: SessionSecret().verifier, boxes: change.boxes)
        #expect(forged.secret(for: id, identity: member) == nil)
        let changes: [RoleChange] = [.kick(UUID(), change), .rekey(change), .epochHistory([0: SessionSecret(), 1: SessionSecret()])]
        for each in changes { #expect(RoleRecord.decode(RoleRecord.encode(each)) == each) }
        let kick = RoleRecord.encode(.kick(UUID(), change))
        #expect(RoleRecord.decode(Array(kick.dropLast())) == nil)
        #expect(RoleRecord.decode(kick + [0]) == nil)
        // The same epoch named twice in a history is no record.
        #expect(RoleRecord.decode([0x00, 0x52, 8, 0, 2, 0, 0] + secret.bytes + [0, 0] + secret.bytes) == nil)
        #expect(RoleRecord.decode([0x00, 0x52, 8, 0, 2, 0, 0] + secret.bytes + [0, 1] + secret.bytes) != nil)
        // Nor a key sealed to no point on the curve.
        #expect(SigningKeyPair.sealBox(secret.bytes, to: [UInt8](repeating: 0, count: 31)) == nil)
    }

    @Test func theEpochGoesPastTheOneByteItOnceWas() throws {
        // The book moves through 256 changes and on: the 256th is the next epoch like any other.
        let ana = UUID()
        var book = RoleBook(creator: ana)
        for number in 1...UInt16(256) {
            let change = EpochChange(epoch: number, verifier: SessionSecret().verifier, boxes: [:])
            #expect(book.apply(.rekey(change), by: ana, order: UInt64(number))?.refusal == nil)
        }
        #expect(book.current.epoch == 256)
        #expect(book.refusal(of: .rekey(EpochChange(epoch: 256, verifier: SessionSecret().verifier, boxes: [:])), by: ana)?
            .hasPrefix("made for epoch 256 while the session is in epoch 256") == true)

        // A body sealed in epoch 256 names it in two bytes; the key of epoch 0, or a body whose
        // epoch bytes were changed to 0, opens nothing (the epoch is bound into the sealing).
        let secret = SessionSecret()
        let session = UUID()
        let sealer = Sealer(secret: secret, sessionID: session, epoch: 256)
        let sealed = sealer.seal(Array("{}".utf8))
        #expect(Sealer.epoch(of: sealed) == 256 && sealed[0] == 1 && sealed[1] == 0)
        #expect(sealer.open(sealed) == Array("{}".utf8))
        var relabelled = sealed
        relabelled[0] = 0
        #expect(Sealer(secret: secret, sessionID: session, epoch: 0).open(relabelled) == nil)

        // A history carries the newest older secrets, at most `maximumHistorySecrets` of them.
        let older = Dictionary(uniqueKeysWithValues: (0..<UInt16(RoleRecord.maximumHistorySecrets + 5)).map { ($0, SessionSecret()) })
        guard case .epochHistory(let carried)? = RoleRecord.decode(RoleRecord.encode(.epochHistory(older))) else {
            Issue.record("the history does not read back")
            return
        }
        #expect(carried.count == RoleRecord.maximumHistorySecrets && carried.keys.min() == 5 && carried[300] == older[300])
    }

    @Test func aJoinerPastMoreEpochsThanAHistoryCarriesFindsTheRestInTheOlderHistories() throws {
        // The host moves through 1,030 epochs; its history record in epoch 6 hands on 0 to 5, the
        // one in epoch 1,030 the newest 1,024 before it (6 to 1,029).
        var group = RoleTestGroup()
        let host = group.member()
        var secrets: [UInt16: SessionSecret] = [0: group.secret]
        for epoch in UInt16(1)...1030 { secrets[epoch] = SessionSecret() }
        func history(in epoch: UInt16, _ group: inout RoleTestGroup) -> OrderedDelivery {
            host.learn(secrets[epoch]!, epoch: epoch, replacing: true)
            _ = host.advance(to: epoch)
            return group.role(.epochHistory(secrets.filter { $0.key < epoch }), by: host)
        }
        let records = [history(in: 6, &group), history(in: 1030, &group)]
        #expect(records.map { Sealer.epoch(of: $0.body) } == [6, 1030])

        // Dan holds only the newest secret: the newest history names 6 to 1,029, and the one in
        // epoch 6, which it then opens, the rest.
        let dan = BodySealer(secret: secrets[1030]!, sessionID: group.sessionID, identity: SigningKeyPair(), epoch: 1030)
        dan.learnEpochs(from: records)
        #expect(dan.secrets.count == 1031)
        #expect(dan.secret(of: 0) == group.secret && dan.secret(of: 5) == secrets[5] && dan.secret(of: 6) == secrets[6])
        #expect(dan.secret(of: 1029) == secrets[1029])
        // With the newest history alone, the epochs before 6 stay unknown.
        let eve = BodySealer(secret: secrets[1030]!, sessionID: group.sessionID, identity: SigningKeyPair(), epoch: 1030)
        eve.learnEpochs(from: [records[1]])
        #expect(eve.secrets.count == 1025 && eve.secret(of: 5) == nil)
    }

    @Test func anInviteNamesItsEpochAndABadOneSaysSo() throws {
        var invitation = Invitation(host: "relay.example", port: 7462, sessionID: UUID(), secret: SessionSecret())
        #expect(!invitation.description.contains("e="))
        invitation.epoch = 4
        let parsed = try Invitation(parsing: invitation.description)
        #expect(parsed.epoch == 4)
        #expect(parsed == invitation)
        #expect(throws: InvitationError.self) { try Invitation(parsing: invitation.description + "&e=5") }
        // A ticket travels too, and says when the invite expires.
        invitation.ticket = InviteTicket.make(sessionID: invitation.sessionID, expiry: 1_800_000_000, key: SigningKeyPair())
        #expect(try Invitation(parsing: invitation.description) == invitation)
        #expect(invitation.expiry?.timeIntervalSince1970 == 1_800_000_000)
        #expect(throws: InvitationError.self) { try Invitation(parsing: invitation.description + "&x=AAAA") }
        #expect(throws: InvitationError.self) { try Invitation(parsing: invitation.description.replacingOccurrences(of: "e=4", with: "e=65536")) }
        // Past the one-byte epochs: an invite of epoch 256 names it.
        invitation.epoch = 256
        #expect(try Invitation(parsing: invitation.description).epoch == 256)
    }
}
