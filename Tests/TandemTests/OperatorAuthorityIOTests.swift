import Foundation
import Tandem
import TandemClock
import TandemNet
import TandemTestKit
import Testing

/// Any operator removes someone and rekeys through a relay, the in-memory one and the real one on
/// loopback alike, also once the creator has left: the relay learns who the operators are from
/// their own signed statements (a grant, then a claim when the last one leaves), so that the
/// invite of before stops admitting and the new one admits. Invites that expire are refused by
/// both relays once expired, and an operator's invite of a later epoch carries an expiry of its
/// own.
@Suite(.timeLimit(.minutes(1))) struct OperatorAuthorityIOTests {
    struct Slides: GroupActivity {
        var deck: String
    }

    private func center(_ name: String, _ relay: TestRelay, lifetime: TimeSpan? = nil) -> ActivityCenter {
        let center = ActivityCenter()
        center.displayName = name
        center.configure(relay: relay.connector, host: "127.0.0.1", port: relay.port)
        center.inviteLifetime = lifetime
        return center
    }

    /// `name`'s session, joined with `invitation` (a new one when nil), once it sees `count` participants.
    private func joined(_ name: String, _ relay: TestRelay, invitation: Invitation?, count: Int,
                        lifetime: TimeSpan? = nil) async throws -> GroupSession<Slides> {
        let center = center(name, relay, lifetime: lifetime)
        var sessions = center.sessions(for: Slides.self).makeAsyncIterator()
        if let invitation { try await center.accept(invitation) } else { _ = try await center.start(Slides(deck: "q3")) }
        let session = try #require(await sessions.next())
        session.join()
        #expect(await awaitValue(session.$activeParticipants.values, within: 20) { $0.count == count }, "\(name) sees \(count)")
        return session
    }

    @Test(arguments: TransportKind.allCases)
    func anOperatorTheCreatorMadeRemovesAfterTheCreatorLeftAndTheHeirRekeys(_ kind: TransportKind) async throws {
        let relay = try TestRelay(kind)
        defer { relay.shutdown() }
        let host = try await joined("host", relay, invitation: nil, count: 1)
        let ana = try await joined("ana", relay, invitation: host.invitation, count: 2)
        let ben = try await joined("ben", relay, invitation: host.invitation, count: 3)
        let anaID = ana.localParticipant.id
        try host.makeOperator(ana.localParticipant)
        #expect(await awaitValue(ana.$roles.values, within: 20) { $0.isOperator(anaID) })
        host.leave()
        #expect(await awaitValue(ana.$activeParticipants.values, within: 20) { $0.count == 2 })

        // Ana, no creator, removes Ben: the relay drops him and admits by her new verifier.
        try ana.remove(ben.localParticipant)
        #expect(await awaitValue(ben.$state.values, within: 20) { state in
            if case .invalidated(let reason) = state { reason.code == .removed } else { false }
        }, "ben's session: \(ben.state)")
        #expect("\(ben.state)".contains("removed by ana"))
        #expect(await awaitValue(ana.$roles.values, within: 20) { $0.epoch == 1 })
        await #expect(throws: (any Error).self) { try await center("eve", relay).accept(host.invitation) }
        let first = ana.currentInvitation
        #expect(first.epoch == 1)
        let dan = try await joined("dan", relay, invitation: first, count: 2)

        // Ana leaves too: Dan, alone, claims the role (the relay takes his claim, as he has been
        // present longest of those left) and rekeys; the invite of epoch 1 stops admitting.
        let danID = dan.localParticipant.id
        ana.leave()
        #expect(await awaitValue(dan.$roles.values, within: 20) { $0.isOperator(danID) })
        try dan.rekey()
        #expect(await awaitValue(dan.$roles.values, within: 20) { $0.epoch == 2 })
        let second = dan.currentInvitation
        #expect(second.epoch == 2)
        // The relay took Dan's move: a joiner with the invite of epoch 1 is refused, one with the
        // new invite admitted.
        let refusedDeadline = ContinuousClock.now + .seconds(10)
        var refused = false
        while !refused, ContinuousClock.now < refusedDeadline {
            do {
                _ = try await center("fay", relay).accept(first)
                try await Task.sleep(for: .milliseconds(50))
            } catch {
                refused = true
            }
        }
        #expect(refused, "the relay still admits by epoch 1")
        _ = try await joined("gus", relay, invitation: second, count: 2)
    }

    @Test(arguments: TransportKind.allCases)
    func expiredInvitesAreRefusedAndALaterEpochsInviteHasItsOwnExpiry(_ kind: TransportKind) async throws {
        let relay = try TestRelay(kind)
        defer { relay.shutdown() }
        // Long enough for a join on a loaded machine, short enough to wait out.
        let host = try await joined("host", relay, invitation: nil, count: 1, lifetime: .seconds(8))
        let firstExpiry = try #require(host.invitation.expiry)
        _ = try await joined("ana", relay, invitation: host.invitation, count: 2)
        // Past the expiry (a Unix second, which the relay compares with its own clock), the same
        // invite is refused.
        let untilExpired = firstExpiry.timeIntervalSinceNow + 1.2
        if untilExpired > 0 { try await Task.sleep(for: .seconds(untilExpired)) }
        await #expect(throws: (any Error).self) { try await center("eve", relay).accept(host.invitation) }

        // The host rekeys: its new invite admits for eight seconds from now, not from the first.
        try host.rekey()
        #expect(await awaitValue(host.$roles.values, within: 20) { $0.epoch == 1 })
        let renewed = host.currentInvitation
        let renewedExpiry = try #require(renewed.expiry)
        #expect(renewedExpiry > firstExpiry)
        _ = try await joined("dan", relay, invitation: renewed, count: 3)
    }
}
