import Foundation
import Synchronization
import Testing
import Tandem
import TandemClock
import TandemNet
import TandemPlayback
import TandemTestKit

/// A coordinator refuses to send what the group would skip, through the real session stack on
/// the in-memory relay: each refusal is thrown to the caller, and nothing reaches the group. What
/// the group does with poisoned proposals sent past the coordinator, and a late joiner whose
/// history holds them, is `PoisonedGroupTests`, in virtual time.
@Suite(.serialized) struct PoisonedSessionIOTests {
    typealias Member = CoordinatorBehaviourIOTests.Member

    @Test func aCoordinatorRefusesToProposeWhatTheGroupWouldSkip() async throws {
        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        let host = try await CoordinatorBehaviourIOTests.member("host", relay: relay, invitation: nil,
                                                             delegate: CoordinatorBehaviourIOTests.CommandLog(item: "film"))
        try host.coordinator.reportItem("film", identity: "d=60.000;h=00000000000000aa", ready: true)
        try host.coordinator.transitionToItem(identifier: "film")
        #expect(await awaitTimeline(of: host.coordinator) { $0.version == 2 })

        func refusal(_ propose: () throws -> Void) -> ProposalRejection.Reason? {
            do {
                try propose()
                return nil
            } catch let rejection as ProposalRejection {
                return rejection.reason
            } catch {
                Issue.record("not a rejection: \(error)")
                return nil
            }
        }
        #expect(refusal { try host.coordinator.proposeRateChange(to: 1e15) } == .rateOutOfRange)
        #expect(refusal { try host.coordinator.proposeRateChange(to: -1) } == .rateOutOfRange)
        #expect(refusal { try host.coordinator.proposeRateChange(to: .nan) } == .notFinite)
        #expect(refusal { try host.coordinator.proposeSeek(to: .max) } == .mediaTimeOutOfRange)
        #expect(refusal { try host.coordinator.proposeSeek(to: -1) } == .mediaTimeOutOfRange)
        #expect(refusal { try host.coordinator.proposeSeek(to: 61_000_000_000) } == .mediaTimeOutOfRange)
        #expect(refusal { try host.coordinator.transitionToItem(identifier: "") } == .oversized)
        #expect(refusal { try host.coordinator.reportItem("film", identity: String(repeating: "h", count: 300), ready: true) } == .oversized)
        // None of them was sent: the next valid change is the very next version.
        host.coordinator.coordinateSeek(to: 60_000_000_000)
        #expect(await awaitTimeline(of: host.coordinator) { $0.anchorMediaTime == 60_000_000_000 })
        #expect(host.coordinator.timeline.version == 3)
    }
}
