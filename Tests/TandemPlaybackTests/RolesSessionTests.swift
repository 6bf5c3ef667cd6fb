import Foundation
import Testing
import Tandem
import TandemClock
@testable import TandemPlayback
import TandemTestKit

/// Roles through real sessions, from the library's side, with whole participants in virtual time
/// (`VirtualSessions`, each with a coordinator coordinating with its session and a scripted
/// player): the creator is the operator everyone sees, a guest's changes the policy refuses are
/// refused before they are sent (checked on the participant's loop and thrown, or told as
/// `.requestRefused` by the non-throwing forms) and its role changes throw with the reason, an
/// operator's grant reaches everyone in order, and a guest's `end()` under an operators-only
/// ending leaves alone.
@Suite struct RolesSessionTests {
    @Test func aGuestIsRefusedBeforeProposingUntilAnOperatorMakesItOne() throws {
        let sessions = VirtualSessions(activity: WatchTogether(item: "film"))
        defer { sessions.shutdown() }
        let hostMember = try sessions.join("host")
        let hostSession = hostMember.session
        #expect(hostSession.invitation.creator == hostSession.localParticipant.id)
        try hostSession.setPolicy(SessionPolicy(playback: .operators, ending: .operators))
        sessions.run(for: 100)
        let guestMember = try sessions.join("ben")
        let guestSession = guestMember.session
        sessions.run(for: 100)
        let hostID = hostSession.localParticipant.id
        #expect(guestSession.roles.operators == [hostID] && guestSession.roles.policy.playback == .operators)

        let host = SessionParticipant(hostMember)
        let guest = SessionParticipant(guestMember)
        sessions.run()
        try host.coordinator.transitionToItem(identifier: "film")
        sessions.run(for: 300)
        #expect(guest.coordinator.timeline.item == "film")

        // Thrown at once, with who may; nothing sent.
        let version = guest.coordinator.timeline.version
        #expect {
            try guest.coordinator.proposeRateChange(to: 1)
        } throws: { error in
            (error as? ProposalRejection)?.reason == .notPermitted && "\(error)" == "only operators may play (host is an operator)"
        }
        // The non-throwing form tells it as an event.
        guest.coordinator.coordinateSeek(to: .zero + .seconds(2))
        let refusals = guest.events.compactMap { if case .requestRefused(_, let reason) = $0 { reason } else { nil } }
        #expect(refusals == ["only operators may seek (host is an operator)"])
        #expect {
            try guestSession.makeOperator(guestSession.localParticipant)
        } throws: { error in
            (error as? GroupSessionError)?.code == .notPermitted
        }
        sessions.run(for: 300)
        // Still where the host put it: nothing of the guest's was ordered.
        #expect(guest.coordinator.timeline.version == version)

        // Made an operator by the host, the guest's play goes through, everywhere.
        try hostSession.makeOperator(guestSession.localParticipant)
        sessions.run(for: 100)
        let guestID = guestSession.localParticipant.id
        #expect(guestSession.roles.isOperator(guestID))
        try guest.coordinator.proposeRateChange(to: 1)
        sessions.run(for: 1_200)
        #expect(host.coordinator.timeline.rate == 1)

        // The guest's grant taken back, its end leaves it alone: the host stays joined.
        try hostSession.revokeOperator(guestSession.localParticipant)
        sessions.run(for: 100)
        #expect(!guestSession.roles.isOperator(guestID))
        guestSession.end()
        guard case .invalidated(let reason) = guestSession.state else {
            Issue.record("the guest's session is still \(guestSession.state)")
            return
        }
        #expect(reason.code == .left)
        sessions.run(for: 100)
        #expect(hostSession.activeParticipants.count == 1)
        #expect({ if case .joined = hostSession.state { true } else { false } }())
        #expect(host.player.commandsOffLoop == 0 && guest.player.commandsOffLoop == 0)
    }
}
