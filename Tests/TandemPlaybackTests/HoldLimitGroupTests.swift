import Foundation
import Testing
import TandemClock
@testable import TandemPlayback

/// The hold limits on a virtual-time group of real coordinator shells (`VirtualCoordinatedGroup`),
/// their clocks a few milliseconds apart: a cap set by one participant is the group's, and a
/// stall held past it is let go by everyone at one instant.
@Suite struct HoldLimitGroupTests {
    @Test func aCapSetByTheHostReleasesAStallForEveryoneAtOneInstant() throws {
        let group = VirtualCoordinatedGroup()
        defer { group.shutdown() }
        let host = try group.join("host")
        let ana = try group.join("ana", clockOffset: 2_000_000)
        let ben = try group.join("ben", clockOffset: -1_000_000)
        group.run(for: 200)
        host.coordinator.maximumHold = .seconds(2)
        group.run(for: 100)
        #expect(ana.coordinator.maximumHold == .seconds(2) && ben.coordinator.maximumHold == .seconds(2))
        host.coordinator.coordinateRateChange(to: 1)
        group.run(for: 300)
        let stall = ben.coordinator.beginSuspension(for: .stallRecovery)
        group.run(for: 100)
        #expect(host.coordinator.core.isWaiting && host.coordinator.timeline.rate == 0)
        let waited = host.coordinator.timeline
        #expect(ana.coordinator.timeControl(playerRate: 1, stalled: false).reason == .waitingForCoordinatedPlayback)
        let expiry = try #require(host.coordinator.core.nextHoldExpiry)

        // Past the cap the replicated cores still hold the hold (no record came), but everyone's
        // player was told to play from where the group waited, at the expiry itself.
        group.run(for: 2_200)
        for member in [host, ana] {
            guard let play = member.player.plays.first(where: { $0.timeline.anchorSessionTime == expiry }) else {
                Issue.record("\(member.participant.name) was not told to play: \(member.player.commands)")
                continue
            }
            #expect(member.sessionTime(atHost: play.hostTime) == expiry)
            #expect(play.itemTime == waited.anchorMediaTime)
        }
        // Players read the group as it stands: playing, though no record has come since.
        #expect(ana.coordinator.timeControl(playerRate: 1, stalled: false).status == .playing)
        #expect(!ben.player.plays.contains { $0.timeline.anchorSessionTime == expiry }, "a suspended player is its own")

        // The next record settles it alike everywhere; Ben's suspension stays until he ends it.
        stall.end()
        group.run(for: 600)
        let settled = host.coordinator.core
        #expect(settled.timeline.anchorSessionTime == expiry && settled.timeline.rate == 1)
        #expect(ana.coordinator.core == settled && ben.coordinator.core == settled)
        #expect(CoordinatedGroupTests.transportOnTimeline([host, ana, ben]))
    }
}
