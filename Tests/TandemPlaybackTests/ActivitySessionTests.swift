import Foundation
import Testing
import Tandem
import TandemClock
import TandemTestKit
@testable import TandemPlayback

/// Activity changes through the real session stack on the in-memory relay: `session.activity = …`
/// is an ordered record the coordinators pass over silently (no rejection, the group plays on),
/// and a late joiner, whose history holds it, lands on the same core. Waits follow published
/// state, each bounded.
@Suite(.serialized) struct ActivitySessionTests {
    typealias Behaviour = CoordinatorBehaviourTests
    typealias EventLog = PoisonedSessionTests.EventLog

    /// Whether `event` is the seek to 30 s taking effect.
    @Sendable static func isTheSeek(_ event: CoordinationCore.Event) -> Bool {
        if case .timelineChanged(_, _, .seek(let target)) = event { target == 30_000_000_000 } else { false }
    }

    @Test func anActivityChangeIsNoRejectionForAnyCoordinatorAndALateJoinerLandsAsTheOthers() async throws {
        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        let hostCoordinator = PlaybackCoordinator(delegate: nil)
        let hostEvents = EventLog(hostCoordinator)
        let host = try await Behaviour.member("host", relay: relay, invitation: nil, delegate: Behaviour.CommandLog(item: "film"),
                                              coordinator: hostCoordinator)
        host.coordinator.delegate = host.delegate
        try host.coordinator.reportItem("film", identity: "d=60.000;h=00000000000000aa", ready: true)
        try host.coordinator.transitionToItem(identifier: "film")
        try host.coordinator.coordinateRateChange(to: 1)
        #expect(await awaitTimeline(of: host.coordinator) { $0.rate == 1 && $0.version == 3 })
        let guestCoordinator = PlaybackCoordinator(delegate: nil)
        let guestEvents = EventLog(guestCoordinator)
        let guest = try await Behaviour.member("guest", relay: relay, invitation: host.session.invitation,
                                               delegate: Behaviour.CommandLog(item: "film"), coordinator: guestCoordinator)
        guest.coordinator.delegate = guest.delegate
        #expect(await awaitTimeline(of: guest.coordinator) { $0.version == 3 })

        // The guest changes the activity: an ordered record of its own kind, order 4.
        guest.session.activity = WatchTogether(item: "another film")
        #expect(await awaitValue(host.session.$activity.values) { $0.item == "another film" })
        // Then a seek, order 5: both apply it, with no rejection between.
        try host.coordinator.coordinateSeek(to: 30_000_000_000)
        for member in [host, guest] {
            #expect(await awaitTimeline(of: member.coordinator) { $0.anchorMediaTime == 30_000_000_000 })
            #expect(member.coordinator.timeline.version == 5 && member.coordinator.timeline.rate == 1)
        }
        // Events come in order: once the seek's is logged, a rejection of the activity change
        // before it would be too.
        for log in [hostEvents, guestEvents] {
            #expect(await awaitValue(log.$all.values) { $0.contains(where: Self.isTheSeek) })
            #expect(log.rejections.isEmpty, "\(log.all)")
        }
        #expect(host.coordinator.core == guest.coordinator.core)

        // A late joiner replays the history, the activity change included, and lands on the same core.
        let lateCoordinator = PlaybackCoordinator(delegate: nil)
        let lateEvents = EventLog(lateCoordinator)
        let late = try await Behaviour.member("late", relay: relay, invitation: host.session.invitation,
                                              delegate: Behaviour.CommandLog(item: "film"), coordinator: lateCoordinator)
        late.coordinator.delegate = late.delegate
        #expect(late.session.activity.item == "another film")
        #expect(await awaitTimeline(of: late.coordinator) { $0.version == 5 && $0.anchorMediaTime == 30_000_000_000 })
        #expect(late.coordinator.core.timeline == host.coordinator.core.timeline)
        #expect(await awaitValue(lateEvents.$all.values) { $0.contains(where: Self.isTheSeek) })
        #expect(lateEvents.rejections.isEmpty, "\(lateEvents.all)")
    }
}
