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
@Suite(.serialized) struct ActivitySessionIOTests {
    typealias Poisoned = PoisonedSessionIOTests

    /// Whether `event` is the seek to 30 s taking effect.
    @Sendable static func isTheSeek(_ event: CoordinationCore.Event) -> Bool {
        if case .timelineChanged(_, _, .seek(let target, _)) = event { target == 30_000_000_000 } else { false }
    }

    @Test func anActivityChangeIsNoRejectionForAnyCoordinatorAndALateJoinerLandsAsTheOthers() async throws {
        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        let (host, hostEvents) = try await Poisoned.loggedMember("host", relay: relay, invitation: nil)
        try await Poisoned.playFilm(host)
        let (guest, guestEvents) = try await Poisoned.loggedMember("guest", relay: relay, invitation: host.session.invitation)
        #expect(await awaitTimeline(of: guest.coordinator) { $0.version == 3 })

        // The guest changes the activity: an ordered record of its own kind, order 4.
        guest.session.activity = WatchTogether(item: "another film")
        #expect(await awaitValue(host.session.$activity.values) { $0.item == "another film" })
        // Then a seek, order 5: both apply it, with no rejection between.
        host.coordinator.coordinateSeek(to: 30_000_000_000)
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
        let (late, lateEvents) = try await Poisoned.loggedMember("late", relay: relay, invitation: host.session.invitation)
        #expect(late.session.activity.item == "another film")
        #expect(await awaitTimeline(of: late.coordinator) { $0.version == 5 && $0.anchorMediaTime == 30_000_000_000 })
        #expect(late.coordinator.core.timeline == host.coordinator.core.timeline)
        #expect(await awaitValue(lateEvents.$all.values) { $0.contains(where: Self.isTheSeek) })
        #expect(lateEvents.rejections.isEmpty, "\(lateEvents.all)")
    }
}
