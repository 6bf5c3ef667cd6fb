import Foundation
import Synchronization
import Testing
import Tandem
import TandemClock
import TandemNet
import TandemPlayback
import TandemTestKit

/// A coordinator refuses to send what the group would skip, through the real session stack on
/// the in-memory relay: each refusal is thrown to the caller, and nothing reaches the group; and
/// the session members with logged events that other suites of the session stack share. What
/// the group does with poisoned proposals sent past the coordinator, and a late joiner whose
/// history holds them, is `PoisonedGroupTests`, in virtual time.
@Suite(.serialized) struct PoisonedSessionIOTests {
    typealias Member = CoordinatorBehaviourIOTests.Member

    /// Every event a coordinator reports from now on, published: a test awaits what it needs
    /// (`awaitValue(log.$all.values)`) instead of polling.
    final class EventLog: @unchecked Sendable {
        @Published private(set) var all: [CoordinationCore.Event] = []
        private let task: Mutex<Task<Void, Never>?> = Mutex(nil)

        init(_ coordinator: PlaybackCoordinator) {
            let stream = coordinator.events
            // The one writer of `all`.
            let task = Task { [weak self] in
                for await event in stream {
                    guard let self else { return }
                    self.all = self.all + [event]
                }
            }
            self.task.withLock { $0 = task }
        }

        deinit { task.withLock { $0?.cancel() } }

        /// The reasons of the rejections among `events`, in order.
        static func rejections(_ events: [CoordinationCore.Event]) -> [ProposalRejection.Reason] {
            events.compactMap { if case .proposalRejected(let rejection, _, _) = $0 { rejection.reason } else { nil } }
        }

        /// The reasons of the rejections reported so far, in order.
        var rejections: [ProposalRejection.Reason] { Self.rejections(all) }

        /// Whether the rejections reported come to `reasons`, within `seconds`.
        func rejections(become reasons: [ProposalRejection.Reason], within seconds: Double = 10) async -> Bool {
            await awaitValue($all.values, within: seconds) { Self.rejections($0) == reasons }
        }
    }

    /// A member whose coordinator's events are logged from before it joins (a late joiner's
    /// history included), its delegate a command log on the film.
    static func loggedMember(_ name: String, relay: TestRelay,
                             invitation: Invitation?) async throws -> (member: CoordinatorBehaviourIOTests.Member, events: EventLog) {
        let coordinator = PlaybackCoordinator(delegate: nil)
        let events = EventLog(coordinator)
        let member = try await CoordinatorBehaviourIOTests.member(name, relay: relay, invitation: invitation,
                                                               delegate: CoordinatorBehaviourIOTests.CommandLog(item: "film"),
                                                               coordinator: coordinator)
        member.coordinator.delegate = member.delegate
        return (member, events)
    }

    /// The host puts the group on the one-minute film and plays it: orders 1 to 3.
    static func playFilm(_ host: CoordinatorBehaviourIOTests.Member) async throws {
        try host.coordinator.reportItem("film", identity: "d=60.000;h=00000000000000aa", ready: true)
        try host.coordinator.transitionToItem(identifier: "film")
        host.coordinator.coordinateRateChange(to: 1)
        #expect(await awaitTimeline(of: host.coordinator) { $0.rate == 1 && $0.version == 3 })
    }

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
