import Foundation
import TandemNet
import TandemWire
import Testing

/// Invites that expire, as the relay's pure core checks them on virtual time: a creator's ticket
/// makes the session's invites expire; a joiner's ticket admits until its expiry on the relay's
/// Unix clock, and a missing, forged or expired one is refused with the reason; those admitted
/// before resume after the expiry.
@Suite("Relay invite tickets")
struct InviteTicketTests {
    private let fixture = CoreAdmission(key: [UInt8](repeating: 4, count: 32), session: UUID())
    /// The relay's Unix time at instant 0: 1,800,000,000 s.
    private let unixAtZero: Int64 = 1_800_000_000 * 1_000_000_000

    /// Opens `connection` and sends `participant`'s hello with `ticket`, then answers the challenge.
    private func join(_ core: inout RelayCore, _ connection: UInt64, _ participant: UUID, create: Bool = false,
                      resume: Bool = false, ticket: [UInt8]?, at now: Int64) -> [RelayFrame] {
        let id = RelayConnectionID(connection)
        _ = core.onOpen(id, entropy: [UInt8](repeating: UInt8(connection), count: RelayCore.entropyLength), at: now)
        let hello = RelayHello(sessionID: fixture.session, participant: TestIdentities.entry(participant, "p"), create: create,
                               activity: [], resume: resume, received: 0, ticket: ticket)
        let challenge = core.onFrame(.hello(hello), from: id, at: now)
        guard case let .send(_, .challenge(nonce, exists))? = challenge.first else { return CoreAdmission.frames(challenge, to: id) }
        let answer = CoreAdmission.answer(nonce: nonce, exists: exists, session: fixture.session, sessionKey: fixture.sessionKey,
                                          participant: participant, identity: TestIdentities.key(of: participant))
        return CoreAdmission.frames(core.onFrame(answer, from: id, at: now), to: id)
    }

    private func welcomed(_ frames: [RelayFrame]) -> Bool { if case .welcome? = frames.first { true } else { false } }

    private func refusal(_ frames: [RelayFrame]) -> RelayFault? { if case let .refusal(fault)? = frames.first { fault } else { nil } }

    @Test("a ticket admits until its expiry on the relay's clock; missing, forged and expired ones are refused")
    func expiry() {
        var core = RelayCore()
        core.unixOffset = unixAtZero
        let ana = TestIdentities.make()
        let expiry: UInt64 = 1_800_000_060
        let ticket = InviteTicket.make(sessionID: fixture.session, expiry: expiry, key: TestIdentities.key(of: ana))
        #expect(welcomed(join(&core, 1, ana, create: true, ticket: ticket, at: 0)))

        let ben = TestIdentities.make()
        #expect(welcomed(join(&core, 2, ben, ticket: ticket, at: 59_000_000_000)))
        #expect(refusal(join(&core, 3, TestIdentities.make(), ticket: nil, at: 1))?.code == .inviteExpired)
        // A ticket signed by someone other than the creator, for a later expiry, is refused.
        let forged = InviteTicket.make(sessionID: fixture.session, expiry: expiry + 3_600, key: TestIdentities.key(of: ben))
        #expect(refusal(join(&core, 4, TestIdentities.make(), ticket: forged, at: 1))?.text.contains("not signed by an operator") == true)
        // Past the expiry: refused, with when.
        let late = refusal(join(&core, 5, TestIdentities.make(), ticket: ticket, at: 60_000_000_000))
        #expect(late?.code == .inviteExpired)
        #expect(late?.text.contains("expired at 2027-01-15T08:01:00Z") == true, "\(String(describing: late))")
        // Ben, admitted before, resumes after it.
        _ = core.onClose(RelayConnectionID(2), at: 61_000_000_000)
        #expect(welcomed(join(&core, 6, ben, resume: true, ticket: nil, at: 61_000_000_000)))
    }

    @Test("a session created without a ticket admits without one; a hello's ticket round-trips with and without a creation proof")
    func withoutTickets() throws {
        var core = RelayCore()
        #expect(welcomed(join(&core, 1, TestIdentities.make(), create: true, ticket: nil, at: 0)))
        #expect(welcomed(join(&core, 2, TestIdentities.make(), ticket: nil, at: 1)))
        let ticket = [UInt8](repeating: 7, count: RelayWireLimits.inviteTicketLength)
        for proof in [nil, [UInt8](repeating: 3, count: RelayWireLimits.creationProofLength)] {
            let hello = RelayHello(sessionID: UUID(), participant: TestIdentities.entry(TestIdentities.make(), "p"), create: true,
                                   activity: [], resume: false, received: 0, creationProof: proof, ticket: ticket)
            var reader = RelayFrameReader()
            reader.append(RelayFrame.hello(hello).encoded())
            #expect(try reader.next() == .hello(hello))
        }
    }
}
