import Foundation
import Synchronization
import Testing
import Tandem
import TandemClock
@testable import TandemPlayback
import TandemTestKit

/// Roles through real sessions on an in-memory relay, from the library's side: the creator is
/// the operator everyone sees, a guest's changes the policy refuses are refused before they are
/// sent (thrown, or told as `.requestRefused` by the non-throwing forms) and its role changes
/// throw with the reason, an operator's grant reaches everyone in order, and a guest's `end()`
/// under an operators-only ending leaves alone.
@Suite(.serialized, .timeLimit(.minutes(1))) struct RolesSessionIOTests {
    @Test func aGuestIsRefusedBeforeProposingUntilAnOperatorMakesItOne() async throws {
        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        let hostSession = try await CoordinatingPlaybackArticleIOTests.joined("host", relay: relay, invitation: nil)
        #expect(hostSession.invitation.creator == hostSession.localParticipant.id)
        try hostSession.setPolicy(SessionPolicy(playback: .operators, ending: .operators))
        let guestSession = try await CoordinatingPlaybackArticleIOTests.joined("ben", relay: relay, invitation: hostSession.invitation)
        let hostID = hostSession.localParticipant.id
        #expect(await awaitValue(guestSession.$roles.values) { $0.operators == [hostID] && $0.policy.playback == .operators })

        let host = PlaybackCoordinator(delegate: CoordinatorBehaviourIOTests.CommandLog(item: "film"))
        host.coordinateWithSession(hostSession)
        let guest = PlaybackCoordinator(delegate: CoordinatorBehaviourIOTests.CommandLog(item: "film"))
        guest.coordinateWithSession(guestSession)
        try host.transitionToItem(identifier: "film")
        #expect(await awaitTimeline(of: guest) { $0.item == "film" })

        // Thrown at once, with who may; nothing sent.
        let version = guest.timeline.version
        #expect {
            try guest.proposeRateChange(to: 1)
        } throws: { error in
            (error as? ProposalRejection)?.reason == .notPermitted && "\(error)" == "only operators may play (host is an operator)"
        }
        // The non-throwing form tells it as an event.
        let refusals = Mutex<[String]>([])
        let watching = Task {
            for await event in guest.events {
                if case .requestRefused(_, let reason) = event { refusals.withLock { $0.append(reason) } }
            }
        }
        defer { watching.cancel() }
        try await Task.sleep(for: .milliseconds(20))
        guest.coordinateSeek(to: .zero + .seconds(2))
        let deadline = ContinuousClock.now + .seconds(5)
        while refusals.withLock({ $0.isEmpty }), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(refusals.withLock { $0 } == ["only operators may seek (host is an operator)"])
        #expect {
            try guestSession.makeOperator(guestSession.localParticipant)
        } throws: { error in
            (error as? GroupSessionError)?.code == .notPermitted
        }
        // Still where the host put it: nothing of the guest's was ordered.
        #expect(guest.timeline.version == version)

        // Made an operator by the host, the guest's play goes through, everywhere.
        try hostSession.makeOperator(guestSession.localParticipant)
        let guestID = guestSession.localParticipant.id
        #expect(await awaitValue(guestSession.$roles.values) { $0.isOperator(guestID) })
        try guest.proposeRateChange(to: 1)
        #expect(await awaitTimeline(of: host) { $0.rate == 1 })

        // The guest's grant taken back, its end leaves it alone: the host stays joined.
        try hostSession.revokeOperator(guestSession.localParticipant)
        #expect(await awaitValue(guestSession.$roles.values) { !$0.isOperator(guestID) })
        guestSession.end()
        guard case .invalidated(let reason) = guestSession.state else {
            Issue.record("the guest's session is still \(guestSession.state)")
            return
        }
        #expect(reason.code == .left)
        #expect(await awaitValue(hostSession.$activeParticipants.values) { $0.count == 1 })
        #expect({ if case .joined = hostSession.state { true } else { false } }())
    }
}
