import Foundation
import Testing
import Tandem
import TandemClock
import TandemTestKit
@testable import TandemPlayback

/// Activity changes through the real session stack, with whole participants in virtual time
/// (`VirtualSessions`, each with a coordinator coordinating with its session and a scripted
/// player): `session.activity = …` is an ordered record the coordinators pass over silently (no
/// rejection, the group plays on), and a late joiner, whose history holds it, lands on the same
/// core.
@Suite struct ActivitySessionTests {
    /// Whether `event` is the seek to 30 s taking effect.
    static func isTheSeek(_ event: CoordinationCore.Event) -> Bool {
        if case .timelineChanged(_, _, .seek(let target, _)) = event { target == 30_000_000_000 } else { false }
    }

    @Test func anActivityChangeIsNoRejectionForAnyCoordinatorAndALateJoinerLandsAsTheOthers() throws {
        let sessions = VirtualSessions(activity: WatchTogether(item: "film"))
        defer { sessions.shutdown() }
        let host = SessionParticipant(try sessions.join("host"))
        sessions.run()
        try host.coordinator.transitionToItem(identifier: "film")
        host.coordinator.coordinateRateChange(to: 1)
        sessions.run(for: 1_200)
        #expect(host.coordinator.timeline.rate == 1 && host.coordinator.timeline.item == "film")
        let guest = SessionParticipant(try sessions.join("guest"))
        sessions.run(for: 300)
        #expect(guest.coordinator.timeline == host.coordinator.timeline)
        let before = host.coordinator.timeline.version

        // The guest changes the activity: an ordered record of its own kind.
        guest.session.activity = WatchTogether(item: "another film")
        sessions.run(for: 100)
        #expect(host.session.activity.item == "another film")
        // Then a seek, after it in the group's order: both apply it, with no rejection between.
        host.coordinator.coordinateSeek(to: 30_000_000_000)
        sessions.run(for: 1_500)
        for member in [host, guest] {
            #expect(member.coordinator.timeline.anchorMediaTime == 30_000_000_000 && member.coordinator.timeline.rate == 1)
            // The activity change held an order of its own.
            #expect(member.coordinator.timeline.version >= before + 2)
            #expect(member.events.contains(where: Self.isTheSeek))
            #expect(member.rejections.isEmpty, "\(member.events)")
            #expect(member.player.commandsOffLoop == 0)
        }
        #expect(host.coordinator.core == guest.coordinator.core)

        // A late joiner replays the history, the activity change included, and lands on the same core.
        let late = SessionParticipant(try sessions.join("late"))
        #expect(late.session.activity.item == "another film")
        sessions.run(for: 1_500)
        #expect(late.coordinator.core.timeline == host.coordinator.core.timeline)
        #expect(late.coordinator.timeline.anchorMediaTime == 30_000_000_000)
        #expect(late.events.contains(where: Self.isTheSeek))
        #expect(late.rejections.isEmpty, "\(late.events)")
    }
}
