import Foundation
import Testing
import TandemClock
import TandemTestKit
@testable import TandemPlayback

/// What AVFoundation's coordinator documents and Tandem's does alike, on a virtual-time group of
/// real coordinator shells (`VirtualCoordinatedGroup`): `.playImmediately` plays through the
/// suspensions that hold the group, `pauseSnapsToMediaTimeOfOriginator` is the group's setting,
/// and a request the group would refuse is an event, not an error.
@Suite struct ApplesCoordinatorSemanticsTests {
    @Test func playImmediatelyPlaysThroughAHoldingSuspensionAndTheSuspendedOneJoinsWhenItEnds() throws {
        let group = VirtualCoordinatedGroup()
        defer { group.shutdown() }
        let host = try group.join("host")
        let ana = try group.join("ana")
        let ben = try group.join("ben")
        group.run(for: 200)
        let stall = ben.coordinator.beginSuspension(for: .stallRecovery)
        group.run(for: 100)
        #expect(host.coordinator.core.isWaiting)
        let benBefore = ben.player.commands.count

        // A plain play waits for Ben, as the group does for any suspension that holds it.
        host.coordinator.coordinateRateChange(to: 1)
        group.run(for: 100)
        #expect(host.coordinator.timeline.rate == 0 && host.coordinator.core.intendedRate == 1)

        // `.playImmediately` plays "regardless of other participants' readiness or suspensions".
        host.coordinator.coordinateRateChange(to: 1, options: .playImmediately)
        group.run(for: 100)
        let playing = host.coordinator.timeline
        #expect(playing.rate == 1 && !host.coordinator.core.isWaiting)
        #expect(ana.coordinator.timeline == playing && ben.coordinator.timeline == playing)
        #expect(host.coordinator.core.suspensions.count == 1, "Ben's suspension goes on; it only stops holding the group")
        #expect(CoordinatedGroupTests.transportInStep([host, ana]))
        #expect(CoordinatedGroupTests.transportOnTimeline([host, ana]))
        group.run(for: 500)
        #expect(ben.player.commands.count == benBefore, "a suspended player is driven by nothing: \(ben.player.commands.dropFirst(benBefore))")

        // Ben's suspension ends: he comes in on the group's timeline, which never stopped.
        stall.end()
        group.run(for: 600)
        #expect(host.coordinator.core.suspensions.isEmpty)
        #expect(host.coordinator.timeline.rate == 1)
        #expect(host.coordinator.timeline.anchorMediaTime == playing.anchorMediaTime, "the others played on: no re-anchor")
        #expect(CoordinatedGroupTests.transportOnTimeline([host, ana, ben]))
        guard case .play(let play)? = ben.player.lastTransport else {
            Issue.record("Ben was not told to play: \(ben.player.commands.dropFirst(benBefore))")
            return
        }
        #expect(play.itemTime == playing.mediaTime(atSessionTime: ben.sessionTime(atHost: play.hostTime)))
    }

    @Test func pauseSnappingIsTheGroupsSettingChangedByAnyParticipantJoinersIncluded() throws {
        let group = VirtualCoordinatedGroup()
        defer { group.shutdown() }
        let host = try group.join("host")
        let ana = try group.join("ana")
        group.run(for: 200)
        #expect(host.coordinator.pauseSnapsToMediaTimeOfOriginator && ana.coordinator.pauseSnapsToMediaTimeOfOriginator)

        ana.coordinator.pauseSnapsToMediaTimeOfOriginator = false
        // Proposed, not set here alone: the group's setting until the change is ordered.
        #expect(ana.coordinator.pauseSnapsToMediaTimeOfOriginator)
        group.run(for: 100)
        #expect(!host.coordinator.pauseSnapsToMediaTimeOfOriginator && !ana.coordinator.pauseSnapsToMediaTimeOfOriginator)
        #expect(host.coordinator.core == ana.coordinator.core)

        // A joiner that starts with the default takes the group's setting from the history.
        let cleo = try group.join("cleo")
        group.run(for: 300)
        #expect(!cleo.coordinator.pauseSnapsToMediaTimeOfOriginator)

        host.coordinator.pauseSnapsToMediaTimeOfOriginator = true
        group.run(for: 100)
        #expect([host, ana, cleo].allSatisfy { $0.coordinator.pauseSnapsToMediaTimeOfOriginator })
    }

    @Test func aRequestTheGroupWouldRefuseIsAnEventAndNothingIsSent() async throws {
        let group = VirtualCoordinatedGroup()
        defer { group.shutdown() }
        let host = try group.join("host")
        group.run(for: 200)
        var events = host.coordinator.events.makeAsyncIterator()
        let version = host.coordinator.timeline.version

        host.coordinator.coordinateRateChange(to: 9)
        guard case .requestRefused(let request, let reason)? = await events.next() else {
            Issue.record("no refusal event")
            return
        }
        #expect(request == .rate(9, []))
        #expect(reason.contains("rate 9"))
        host.coordinator.coordinateSeek(to: .zero + .seconds(3_600 * 48))
        guard case .requestRefused(.seek, _)? = await events.next() else {
            Issue.record("no refusal event for the seek")
            return
        }
        group.run(for: 100)
        #expect(host.coordinator.timeline.version == version, "nothing was sent")
    }
}
