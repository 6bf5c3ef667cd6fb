import Foundation
import Synchronization
import Testing
import TandemClock
import TandemNet
import TandemTestKit
@testable import TandemPlayback

/// A coordinator given no scheduler runs on the loop its channel names, as a session's runs on
/// its participant's loop: here a `VirtualRelayWorld`'s loop, through the same `LoopScheduler`,
/// in virtual time. Its delegate is issued every command on that loop, a record the loop
/// delivers is applied in the same call (no queue in between), and a departure the link reports
/// reaches the machine there too.
@Suite struct CoordinatorLoopTests {
    @Test func everyCommandComesOnTheParticipantsLoop() throws {
        let (group, host, ana) = try CoordinatedGroupTests.pair()
        defer { group.shutdown() }
        for member in [host, ana] {
            let scheduler = try #require(member.coordinator.scheduler as? LoopScheduler)
            #expect(scheduler.loop === member.participant.loop)
        }
        host.coordinator.coordinateRateChange(to: 1)
        group.run(for: 300)
        ana.coordinator.coordinateSeek(to: .zero + .seconds(20))
        group.run(for: 300)
        #expect(host.coordinator.timeline.rate == 1 && host.coordinator.timeline.anchorMediaTime == .zero + .seconds(20))
        #expect(CoordinatedGroupTests.transportInStep([host, ana]))
        for member in [host, ana] {
            #expect(member.player.plays.count >= 2)
            #expect(member.player.commandsOffLoop == 0)
        }
    }

    @Test func aRecordTheLoopDeliversIsAppliedInTheSameCall() throws {
        let (group, host, ana) = try CoordinatedGroupTests.pair()
        defer { group.shutdown() }
        // Observed after the coordinator's channel: what the coordinator shows as the link hands
        // each record on (the observers run in turn, in one call on the loop).
        let seen = Mutex<[(order: UInt64, version: UInt64)]>([])
        let coordinator = ana.coordinator
        ana.participant.observe { event in
            guard case .ordered(let delivery) = event else { return }
            let version = coordinator.timeline.version
            seen.withLock { $0.append((delivery.order, version)) }
        }
        host.coordinator.coordinateRateChange(to: 1)
        group.run(for: 1_200)
        let play = ana.coordinator.timeline
        #expect(play.rate == 1)
        let atDelivery = try #require(seen.withLock { seen in seen.first { $0.order == play.version } })
        #expect(atDelivery.version == play.version, "the play was applied before the link's call returned")
    }

    @Test func aDepartureMidSuspensionReleasesTheGroup() throws {
        let (group, host, ana) = try CoordinatedGroupTests.pair()
        defer { group.shutdown() }
        host.coordinator.coordinateRateChange(to: 1)
        group.run(for: 1_200)
        _ = ana.coordinator.beginSuspension(for: .stallRecovery)
        group.run(for: 200)
        #expect(host.coordinator.core.isWaiting)
        #expect(host.coordinator.timeline.rate == 0)
        // Ana's link leaves with her suspension still on: the host's coordinator hears of it from
        // its link, on the loop, and the group plays on without her.
        #expect(group.world.leave(ana.participant))
        group.run(for: 500)
        #expect(!host.coordinator.core.isWaiting)
        #expect(host.coordinator.core.suspensions.isEmpty)
        #expect(host.coordinator.timeline.rate == 1)
        #expect(host.player.commandsOffLoop == 0)
    }
}
