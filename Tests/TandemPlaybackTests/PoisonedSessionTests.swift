import Foundation
import Synchronization
import Testing
import Tandem
import TandemClock
import TandemNet
import TandemPlayback
import TandemTestKit

/// Poisoned proposals through the real session stack on the in-memory relay: a participant
/// that bypasses its coordinator's validation sends them with the session's ordered channel;
/// every coordinator skips them with an event, the group plays on, and a late joiner whose
/// history holds them joins normally. A coordinator refuses to send them in the first place.
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

    /// The poisons, as bodies of the session's ordered channel, and why each is skipped.
    static func poisons() throws -> [(body: [UInt8], reason: ProposalRejection.Reason)] {
        let encoder = JSONEncoder()
        return [
            (Array(try encoder.encode(PlaybackProposal.setRate(1e15))), .rateOutOfRange),
            (Array(try encoder.encode(PlaybackProposal.seek(to: .max))), .mediaTimeOutOfRange),
            (Array(try encoder.encode(PlaybackProposal.transition(item: "film", at: 3_600_000_000_000))), .mediaTimeOutOfRange),
            (Array("{\"setRate\":{\"_0\":\"fast\"}}".utf8), .unreadable),
            ([0xFF, 0x00, 0x7B], .unreadable),
            (Array(repeating: UInt8(ascii: " "), count: CoordinationCore.maximumProposalBytes + 1), .oversized),
        ]
    }

    @Test func poisonedProposalsAreSkippedByEveryoneAndALateJoinerJoinsNormally() async throws {
        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        let (host, hostEvents) = try await Self.loggedMember("host", relay: relay, invitation: nil)
        try await Self.playFilm(host)

        // Eve bypasses the coordinator: her session orders whatever bytes she gives it.
        let eve = try await CoordinatorBehaviourIOTests.member("eve", relay: relay, invitation: host.session.invitation,
                                                            delegate: CoordinatorBehaviourIOTests.CommandLog(item: "film"))
        let eveEvents = EventLog(eve.coordinator)
        let poisons = try Self.poisons()
        for poison in poisons { try eve.session.sendOrdered(poison.body) }
        #expect(await awaitTimeline(of: host.coordinator) { $0.version == 3 + UInt64(poisons.count) })
        #expect(await hostEvents.rejections(become: poisons.map(\.reason)))
        #expect(await eveEvents.rejections(become: poisons.map(\.reason)))
        // Attributed to the one who sent them, in their order.
        let rejected = hostEvents.all.compactMap { if case .proposalRejected(_, let originator, let order) = $0 { (originator, order) } else { nil } }
        #expect(rejected.map(\.0) == Array(repeating: eve.session.localParticipant.id, count: poisons.count))
        #expect(rejected.map(\.1) == Array(4...(3 + UInt64(poisons.count))))
        // Nothing moved: the group still plays the film at rate 1 from where it started.
        #expect(host.coordinator.timeline.rate == 1 && host.coordinator.timeline.item == "film")
        #expect(host.coordinator.timeline.anchorMediaTime == 0)

        // A late joiner replays the history, poisons included, and lands on the same core.
        let anaLog = CoordinatorBehaviourIOTests.CommandLog(item: "film")
        let anaCoordinator = PlaybackCoordinator(delegate: anaLog)
        let anaEvents = EventLog(anaCoordinator)
        let ana = try await CoordinatorBehaviourIOTests.member("ana", relay: relay, invitation: host.session.invitation,
                                                            delegate: anaLog, coordinator: anaCoordinator)
        #expect(await eventually { ana.coordinator.core == host.coordinator.core })
        // The events reach the log through its own task, after the core is there.
        #expect(await anaEvents.rejections(become: poisons.map(\.reason)))
        #expect(await awaitValue(anaLog.$issued.values) { $0.contains { if case .play(let play) = $0 { play.rate == 1 } else { false } } })

        // And the group goes on: a valid change after them applies everywhere.
        ana.coordinator.coordinateSeek(to: 30_000_000_000)
        // The seek in force everywhere: its pre-roll gate closed (the first version after it is
        // provisional, and the reports that complete it are still to come).
        for member in [host, eve, ana] {
            let coordinator = member.coordinator
            #expect(await awaitTimeline(of: coordinator) { _ in
                let core = coordinator.core
                return core.timeline.anchorMediaTime == 30_000_000_000 && core.waiting.gate == nil
            })
        }
        #expect(host.coordinator.core == ana.coordinator.core && eve.coordinator.core == ana.coordinator.core)
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

    @Test func aSuspensionEndedAtATimePastTheItemStillEndsAndTheGroupResumes() async throws {
        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        let host = try await CoordinatorBehaviourIOTests.member("host", relay: relay, invitation: nil,
                                                             delegate: CoordinatorBehaviourIOTests.CommandLog(item: "film"))
        try host.coordinator.reportItem("film", identity: "d=60.000;h=00000000000000aa", ready: true)
        try host.coordinator.transitionToItem(identifier: "film")
        host.coordinator.coordinateRateChange(to: 1)
        #expect(await awaitTimeline(of: host.coordinator) { $0.rate == 1 })
        let stall = host.coordinator.beginSuspension(for: .stallRecovery)
        // Waiting pauses the published timeline.
        #expect(await awaitTimeline(of: host.coordinator) { $0.rate == 0 })
        #expect(host.coordinator.core.isWaiting)
        stall.end(proposingNewTime: .max)
        #expect(await awaitTimeline(of: host.coordinator) { $0.rate == 1 })
        #expect(!host.coordinator.core.isWaiting)
        #expect(host.coordinator.timeline.anchorMediaTime == 60_000_000_000)
    }
}
