import Foundation
import TandemNet
import TandemWire
import Testing

/// Who may rekey and remove at the relay, on virtual time: operators' signed statements grant,
/// revoke and claim the role at the relay's pure core, which checks each signature against the
/// operator keys it keeps, never the connection; the longest-present participant claims the
/// role when no operator is present, as the participants decide; the tickets of any operator it
/// knows admit, those of one revoked no more.
@Suite("Relay authority")
struct RelayAuthorityTests {
    private let fixture = CoreAdmission(key: [UInt8](repeating: 5, count: 32), session: UUID())
    /// The relay's Unix time at instant 0: 1,800,000,000 s.
    private let unixAtZero: Int64 = 1_800_000_000 * 1_000_000_000

    /// A core with `count` participants, the first the creator, each on the connection of its
    /// number (1, 2, …).
    private func party(_ count: Int) -> (RelayCore, [UUID]) {
        var core = RelayCore()
        core.unixOffset = unixAtZero
        let ids = (0..<count).map { _ in TestIdentities.make() }
        for (index, id) in ids.enumerated() {
            _ = fixture.admit(&core, RelayConnectionID(UInt64(index + 1)), id, create: index == 0, at: 0)
        }
        return (core, ids)
    }

    /// What each connection has sent so far, to number its next frame.
    private final class Sequences {
        var last: [UInt64: UInt64] = [:]
        func next(_ connection: UInt64) -> UInt64 {
            last[connection, default: 0] += 1
            return last[connection]!
        }
    }

    /// `change`, signed by `signer` under `counter`, sent on `connection` (whoever's it is).
    private func send(_ core: inout RelayCore, _ change: RelayAuthority.Change, by signer: UUID, counter: UInt64,
                      on connection: UInt64, _ sequences: Sequences, at now: Int64 = 1) -> [RelayDirective] {
        let statement = RelayAuthority.signed(change, session: fixture.session, counter: counter, by: TestIdentities.key(of: signer))
        return core.onFrame(.authority(sequence: sequences.next(connection), statement), from: RelayConnectionID(connection), at: now)
    }

    /// A proposal from `connection`, ordered by the relay.
    private func propose(_ core: inout RelayCore, on connection: UInt64, _ sequences: Sequences, at now: Int64 = 1) {
        _ = core.onFrame(.proposal(sequence: sequences.next(connection), retention: .kept, body: [1]), from: RelayConnectionID(connection), at: now)
    }

    /// Whether the session admits by `next`'s verifier (the relay took a move to its epoch).
    private func admitsBy(_ next: CoreAdmission, _ core: inout RelayCore, connection: UInt64, at now: Int64 = 2) -> Bool {
        let id = RelayConnectionID(connection)
        if case .welcome? = CoreAdmission.frames(next.admit(&core, id, TestIdentities.make(), create: false, at: now), to: id).first {
            return true
        }
        return false
    }

    private func epoch(_ seed: UInt8) -> CoreAdmission {
        CoreAdmission(key: [UInt8](repeating: seed, count: 32), session: fixture.session)
    }

    @Test("an operator the creator granted removes someone after the creator left, whichever connection carries it")
    func grantedOperatorKicksAfterTheCreatorLeft() {
        var (core, ids) = party(4)
        let (ana, ben, cy, dee) = (ids[0], ids[1], ids[2], ids[3])
        let sequences = Sequences()
        let first = epoch(11)

        // Ben, not yet an operator, cannot move the session.
        _ = send(&core, .epoch(1, verifier: first.sessionKey.publicKey, removed: cy), by: ben, counter: 1, on: 2, sequences)
        #expect(core.participants(of: fixture.session) == [ana, ben, cy, dee])

        // Ana grants Ben the role. A forged grant of Dee's, signed by Dee but naming Ana as its
        // signer, does not verify: no honest client sends one, and Dee is dropped.
        _ = send(&core, .grant(publicKey: TestIdentities.key(of: ben).publicKey), by: ana, counter: 5, on: 1, sequences)
        var forged = RelayAuthority.signed(.grant(publicKey: TestIdentities.key(of: dee).publicKey), session: fixture.session, counter: 6,
                                           by: TestIdentities.key(of: dee))
        forged.signer = TestIdentities.key(of: ana).publicKey
        let dropped = core.onFrame(.authority(sequence: sequences.next(4), forged), from: RelayConnectionID(4), at: 1)
        #expect(CoreAdmission.frames(dropped, to: RelayConnectionID(4)).contains {
            if case let .error(fault) = $0 { fault.code == .protocolViolation } else { false }
        })
        #expect(dropped.contains { if case .close(RelayConnectionID(4)) = $0 { true } else { false } })
        #expect(core.participants(of: fixture.session) == [ana, ben, cy])

        // Ana leaves; Ben removes Cy, his statement carried on Cy's own connection (the relay
        // reads the signature, not the connection).
        _ = core.onFrame(.leave(sequence: sequences.next(1)), from: RelayConnectionID(1), at: 1)
        let directives = send(&core, .epoch(1, verifier: first.sessionKey.publicKey, removed: cy), by: ben, counter: 9, on: 3, sequences)
        #expect(CoreAdmission.frames(directives, to: RelayConnectionID(3)).contains { if case let .error(fault) = $0 { fault.code == .removed } else { false } })
        #expect(core.participants(of: fixture.session) == [ben])
        #expect(admitsBy(first, &core, connection: 10))
        #expect(!admitsBy(fixture, &core, connection: 11))

        // The same statement again, or one under an older counter, changes nothing.
        let second = epoch(12)
        _ = send(&core, .epoch(2, verifier: second.sessionKey.publicKey, removed: nil), by: ben, counter: 9, on: 2, sequences)
        _ = send(&core, .epoch(2, verifier: second.sessionKey.publicKey, removed: nil), by: ben, counter: 8, on: 2, sequences)
        #expect(!admitsBy(second, &core, connection: 12))
        _ = send(&core, .epoch(2, verifier: second.sessionKey.publicKey, removed: nil), by: ben, counter: 10, on: 2, sequences)
        #expect(admitsBy(second, &core, connection: 13))
    }

    @Test("when no operator is present, the longest-present participant alone claims the role, and then rekeys")
    func longestPresentClaims() {
        var (core, ids) = party(4)
        let (ana, ben, cy, dee) = (ids[0], ids[1], ids[2], ids[3])
        let sequences = Sequences()
        // Seniority by the first record each proposed: Ana, then Cy, then Ben; Dee proposed nothing.
        propose(&core, on: 1, sequences)
        propose(&core, on: 3, sequences)
        propose(&core, on: 2, sequences)

        // While Ana is here nobody claims.
        _ = send(&core, .claim, by: cy, counter: 4, on: 3, sequences)
        let first = epoch(21)
        _ = send(&core, .epoch(1, verifier: first.sessionKey.publicKey, removed: nil), by: cy, counter: 5, on: 3, sequences)
        #expect(!admitsBy(first, &core, connection: 20))

        _ = core.onFrame(.leave(sequence: sequences.next(1)), from: RelayConnectionID(1), at: 1)
        #expect(!core.participants(of: fixture.session).contains(ana))
        // Ben and Dee have not been here longest: their claims are refused, and so is what follows.
        _ = send(&core, .claim, by: ben, counter: 6, on: 2, sequences)
        _ = send(&core, .claim, by: dee, counter: 6, on: 4, sequences)
        _ = send(&core, .epoch(1, verifier: first.sessionKey.publicKey, removed: nil), by: ben, counter: 7, on: 2, sequences)
        _ = send(&core, .epoch(1, verifier: first.sessionKey.publicKey, removed: nil), by: dee, counter: 7, on: 4, sequences)
        #expect(!admitsBy(first, &core, connection: 21))

        // Cy's claim is taken; she rekeys, removing Dee; a second claim (Ben's) is refused, as an
        // operator is present.
        _ = send(&core, .claim, by: cy, counter: 8, on: 3, sequences)
        _ = send(&core, .epoch(1, verifier: first.sessionKey.publicKey, removed: dee), by: cy, counter: 9, on: 3, sequences)
        #expect(core.participants(of: fixture.session) == [ben, cy])
        #expect(admitsBy(first, &core, connection: 22))
        _ = send(&core, .claim, by: ben, counter: 10, on: 2, sequences)
        let second = epoch(22)
        _ = send(&core, .epoch(2, verifier: second.sessionKey.publicKey, removed: nil), by: ben, counter: 11, on: 2, sequences)
        #expect(!admitsBy(second, &core, connection: 23))
    }

    @Test("a participant that proposed nothing is the heir only after those that did, then by the lower identity")
    func seniorityWithoutRecords() {
        var (core, ids) = party(3)
        let sequences = Sequences()
        _ = core.onFrame(.leave(sequence: sequences.next(1)), from: RelayConnectionID(1), at: 1)
        // Neither Ben nor Cy proposed anything: the lower identity is the heir.
        let (ben, cy) = (ids[1], ids[2])
        let (heir, other, heirConnection, otherConnection): (UUID, UUID, UInt64, UInt64) =
            ben.uuidString < cy.uuidString ? (ben, cy, 2, 3) : (cy, ben, 3, 2)
        let first = epoch(31)
        _ = send(&core, .claim, by: other, counter: 1, on: otherConnection, sequences)
        _ = send(&core, .epoch(1, verifier: first.sessionKey.publicKey, removed: nil), by: other, counter: 2, on: otherConnection, sequences)
        #expect(!admitsBy(first, &core, connection: 30))
        _ = send(&core, .claim, by: heir, counter: 1, on: heirConnection, sequences)
        _ = send(&core, .epoch(1, verifier: first.sessionKey.publicKey, removed: nil), by: heir, counter: 2, on: heirConnection, sequences)
        #expect(admitsBy(first, &core, connection: 31))
    }

    @Test("a joiner's welcome says when each participant present first proposed, whatever the history kept")
    func welcomeCarriesFirstOrders() {
        var (core, ids) = party(3)
        let sequences = Sequences()
        // Ben proposes twice, then Cy once; Ana nothing.
        propose(&core, on: 2, sequences)
        propose(&core, on: 2, sequences)
        propose(&core, on: 3, sequences)
        let joiner = RelayConnectionID(9)
        let directives = fixture.admit(&core, joiner, TestIdentities.make(), create: false, at: 2)
        guard case .welcome(let welcome)? = CoreAdmission.frames(directives, to: joiner).first else {
            Issue.record("no welcome")
            return
        }
        #expect(welcome.firstOrders == [ids[1]: 1, ids[2]: 3])
        // It survives the wire.
        let decoded = try? RelayFrame.decode(RelayFrame.welcome(welcome).encoded().dropFirst(4))
        #expect(decoded == .welcome(welcome))
    }

    @Test("a revoked operator moves nothing, and the last operator cannot be revoked")
    func revocation() {
        var (core, ids) = party(3)
        let (ana, ben) = (ids[0], ids[1])
        let sequences = Sequences()
        // Ben revokes Ana before he is one: refused. Ana cannot revoke herself, the last.
        _ = send(&core, .revoke(publicKey: TestIdentities.key(of: ana).publicKey), by: ben, counter: 1, on: 2, sequences)
        _ = send(&core, .revoke(publicKey: TestIdentities.key(of: ana).publicKey), by: ana, counter: 1, on: 1, sequences)
        _ = send(&core, .grant(publicKey: TestIdentities.key(of: ben).publicKey), by: ana, counter: 2, on: 1, sequences)
        _ = send(&core, .revoke(publicKey: TestIdentities.key(of: ben).publicKey), by: ana, counter: 3, on: 1, sequences)
        let first = epoch(41)
        _ = send(&core, .epoch(1, verifier: first.sessionKey.publicKey, removed: nil), by: ben, counter: 4, on: 2, sequences)
        #expect(!admitsBy(first, &core, connection: 40))
        _ = send(&core, .epoch(1, verifier: first.sessionKey.publicKey, removed: nil), by: ana, counter: 4, on: 1, sequences)
        #expect(admitsBy(first, &core, connection: 41))
    }

    /// Opens `connection` and joins as `participant` (a fresh one by default) with `ticket`
    /// under `admission`'s secret; `create` makes the session.
    private func join(_ core: inout RelayCore, _ admission: CoreAdmission, _ connection: UInt64, as participant: UUID = TestIdentities.make(),
                      create: Bool = false, ticket: [UInt8]?, at now: Int64) -> [RelayFrame] {
        let id = RelayConnectionID(connection)
        _ = core.onOpen(id, entropy: [UInt8](repeating: UInt8(connection), count: RelayCore.entropyLength), at: now)
        let hello = RelayHello(sessionID: admission.session, participant: TestIdentities.entry(participant, "p"), create: create,
                               activity: [], resume: false, received: 0, ticket: ticket)
        let challenge = core.onFrame(.hello(hello), from: id, at: now)
        guard case let .send(_, .challenge(nonce, exists))? = challenge.first else { return CoreAdmission.frames(challenge, to: id) }
        let answer = CoreAdmission.answer(nonce: nonce, exists: exists, session: admission.session, sessionKey: admission.sessionKey,
                                          participant: participant, identity: TestIdentities.key(of: participant))
        return CoreAdmission.frames(core.onFrame(answer, from: id, at: now), to: id)
    }

    private func welcomed(_ frames: [RelayFrame]) -> Bool { if case .welcome? = frames.first { true } else { false } }

    private func refusal(_ frames: [RelayFrame]) -> String? { if case let .refusal(fault)? = frames.first { fault.text } else { nil } }

    @Test("an operator's rekey makes an invite with its own expiry; a revoked operator's tickets stop admitting; the creator's outlive its leaving")
    func ticketsOfOperators() {
        var core = RelayCore()
        core.unixOffset = unixAtZero
        let (ana, ben) = (TestIdentities.make(), TestIdentities.make())
        let sequences = Sequences()
        let seconds: Int64 = 1_000_000_000
        let anasTicket = InviteTicket.make(sessionID: fixture.session, expiry: 1_800_000_060, lifetime: 60, key: TestIdentities.key(of: ana))
        #expect(welcomed(join(&core, fixture, 1, as: ana, create: true, ticket: anasTicket, at: 0)))
        #expect(welcomed(join(&core, fixture, 2, as: ben, ticket: anasTicket, at: 0)))
        #expect(refusal(join(&core, fixture, 3, ticket: nil, at: 1))?.contains("carries no ticket") == true)

        // Ana makes Ben an operator; at 100 s he rekeys, and his invite's ticket (his own key)
        // admits for 60 s from then.
        _ = send(&core, .grant(publicKey: TestIdentities.key(of: ben).publicKey), by: ana, counter: 1, on: 1, sequences)
        let first = epoch(51)
        _ = send(&core, .epoch(1, verifier: first.sessionKey.publicKey, removed: nil), by: ben, counter: 2, on: 2, sequences, at: 100 * seconds)
        let bensTicket = InviteTicket.make(sessionID: fixture.session, expiry: 1_800_000_160, lifetime: 60, key: TestIdentities.key(of: ben))
        #expect(InviteTicket.lifetime(of: bensTicket) == 60)
        #expect(welcomed(join(&core, first, 4, ticket: bensTicket, at: 150 * seconds)))
        #expect(refusal(join(&core, first, 5, ticket: bensTicket, at: 160 * seconds))?.contains("expired") == true)
        // A ticket of no operator's key is refused, however late its expiry.
        let strangers = InviteTicket.make(sessionID: fixture.session, expiry: 1_800_009_999, lifetime: 60, key: SigningKeyPair())
        #expect(refusal(join(&core, first, 6, ticket: strangers, at: 150 * seconds))?.contains("not signed by an operator") == true)

        // Ana revokes Ben: his tickets no longer admit.
        _ = send(&core, .revoke(publicKey: TestIdentities.key(of: ben).publicKey), by: ana, counter: 3, on: 1, sequences, at: 151 * seconds)
        #expect(refusal(join(&core, first, 7, ticket: bensTicket, at: 152 * seconds))?.contains("not signed by an operator") == true)

        // Ana leaves: the tickets she signed still admit.
        _ = core.onFrame(.leave(sequence: sequences.next(1)), from: RelayConnectionID(1), at: 153 * seconds)
        let anasLater = InviteTicket.make(sessionID: fixture.session, expiry: 1_800_000_300, lifetime: 60, key: TestIdentities.key(of: ana))
        #expect(welcomed(join(&core, first, 8, ticket: anasLater, at: 155 * seconds)))
    }

    @Test("once an operator says only operators may end, the relay refuses a guest's end and drops it; an operator's ends; a guest's say is no say")
    func endingIsTheOperatorsOnceTheySaySo() {
        var (core, ids) = party(3)
        let (ana, ben) = (ids[0], ids[1])
        let sequences = Sequences()
        func end(_ core: inout RelayCore, _ connection: UInt64, _ sequences: Sequences) -> [RelayDirective] {
            core.onFrame(.end(sequence: sequences.next(connection), reason: "done"), from: RelayConnectionID(connection), at: 2)
        }
        // A guest cannot take ending for the operators.
        _ = send(&core, .ending(operatorsOnly: true), by: ben, counter: 1, on: 2, sequences)
        var probe = core
        let probeSequences = Sequences()
        probeSequences.last = sequences.last
        #expect(CoreAdmission.frames(end(&probe, 2, probeSequences), to: RelayConnectionID(3)).contains { if case .ended = $0 { true } else { false } },
                "a guest's statement changes nothing: anyone may still end")

        _ = send(&core, .ending(operatorsOnly: true), by: ana, counter: 1, on: 1, sequences)
        let refused = end(&core, 2, sequences)
        let fault = CoreAdmission.frames(refused, to: RelayConnectionID(2)).compactMap { if case let .error(fault) = $0 { fault } else { nil } }.first
        #expect(fault?.code == .notPermitted)
        #expect(!CoreAdmission.frames(refused, to: RelayConnectionID(3)).contains { if case .ended = $0 { true } else { false } })
        #expect(core.participants(of: fixture.session) == [ana, ids[2]], "the guest is dropped; the session goes on")
        _ = send(&core, .grant(publicKey: TestIdentities.key(of: ids[2]).publicKey), by: ana, counter: 2, on: 1, sequences)
        let ended = end(&core, 3, sequences)
        #expect(CoreAdmission.frames(ended, to: RelayConnectionID(1)).contains { if case .ended = $0 { true } else { false } },
                "an operator (granted) ends it")

        // An operator gives ending back to everyone: a guest's end ends.
        var (again, others) = party(2)
        let more = Sequences()
        _ = send(&again, .ending(operatorsOnly: true), by: others[0], counter: 1, on: 1, more)
        _ = send(&again, .ending(operatorsOnly: false), by: others[0], counter: 2, on: 1, more)
        let guestEnd = again.onFrame(.end(sequence: more.next(2), reason: "bye"), from: RelayConnectionID(2), at: 2)
        #expect(CoreAdmission.frames(guestEnd, to: RelayConnectionID(1)).contains { if case .ended = $0 { true } else { false } })
    }
}
