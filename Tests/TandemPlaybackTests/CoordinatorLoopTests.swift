import Foundation
import Synchronization
import Testing
import Tandem
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

    /// A session clock that is known once `known` is set, and tells its observers when told to.
    final class PushingClock: SessionClockSource, @unchecked Sendable {
        let known = Mutex(false)
        let handlers = Mutex<[@Sendable () -> Void]>([])
        func sessionTime(atLocal localTime: Int64) -> Int64? { known.withLock { $0 } ? localTime : nil }
        func localTime(atSession sessionTime: Int64) -> Int64? { known.withLock { $0 } ? sessionTime : nil }
        func errorBound(atLocal localTime: Int64) -> Int64? { 0 }
        func stop() {}
        func observeChanges(_ handler: @escaping @Sendable () -> Void) -> Bool {
            handlers.withLock { $0.append(handler) }
            return true
        }
        /// Learns the first estimate and tells of it.
        func estimate() {
            known.withLock { $0 = true }
            for handler in handlers.withLock({ $0 }) { handler() }
        }
    }

    /// A channel whose session clock appears only later, as a session's does once it joins.
    final class JoiningChannel: CoordinationChannel, @unchecked Sendable {
        let localParticipant = UUID()
        let scheduler: VirtualScheduler
        let source = Mutex<PushingClock?>(nil)
        init(scheduler: VirtualScheduler) { self.scheduler = scheduler }
        func propose(_ proposal: PlaybackProposal) throws {}
        func deliverOrdered(while wanted: @escaping @Sendable () -> Bool, to receive: @escaping @Sendable (OrderedInput) -> Void) {}
        var clock: (any SessionClockSource)? { source.withLock { $0 } }
        var localClock: any MonotonicDerivedClock { SchedulerClock(scheduler: scheduler) }
    }

    /// The scheduler's virtual time as the local clock, which is the host clock too.
    struct SchedulerClock: MonotonicDerivedClock {
        let scheduler: VirtualScheduler
        func now() -> Int64 { scheduler.now.nanoseconds }
        func monotonicTime(atLocal localTime: Int64) -> Int64 { localTime }
        func localTime(atMonotonic monotonicTime: Int64) -> Int64 { monotonicTime }
    }

    @Test func aClockThatAppearsAndTellsOfItsChangesEndsTheWatch() {
        let scheduler = VirtualScheduler(now: HostInstant(nanoseconds: 10_000_000_000))
        let coordinator = PlaybackCoordinator(scheduler: scheduler)
        let channel = JoiningChannel(scheduler: scheduler)
        coordinator.coordinate(over: channel)
        // No clock yet: the shell looks for one every few milliseconds.
        scheduler.advance(by: .milliseconds(20))
        #expect(scheduler.pendingCount == 1)
        // The session joins: its clock tells of its changes, so the watch ends, before any estimate.
        let clock = PushingClock()
        channel.source.withLock { $0 = clock }
        scheduler.advance(by: .milliseconds(20))
        #expect(clock.handlers.withLock { $0.count } == 1)
        #expect(scheduler.pendingCount == 0)
        #expect(coordinator.machine?.mapping == nil)
        // Its first estimate reaches the machine when the clock tells of it.
        clock.estimate()
        scheduler.run()
        #expect(coordinator.machine?.mapping != nil)
        scheduler.advance(by: .milliseconds(100))
        #expect(clock.handlers.withLock { $0.count } == 1)
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
