import Foundation
import Synchronization
import Testing
import Tandem
import TandemClock
import TandemNet
@testable import TandemPlayback
import TandemTestKit

/// A coordinator given no scheduler runs on its session's event loop, the participant's loop:
/// its machine steps there, its delegate is issued commands there, and departures reach it there,
/// through the in-memory relay's real loop.
@Suite(.serialized, .timeLimit(.minutes(1))) struct CoordinatorOnSessionLoopIOTests {
    /// A player that notes, for every command, whether it came on the session's loop, and
    /// completes it before returning (as the built-in player does for most commands).
    final class LoopWitness: PlaybackCoordinatorDelegate, @unchecked Sendable {
        let loop: any SerialEventLoop
        private let counts = Mutex((onLoop: 0, elsewhere: 0))
        /// Every command so far, published.
        @Published private(set) var issued: [PlaybackCommand] = []
        private let log = Mutex<[PlaybackCommand]>([])

        init(loop: any SerialEventLoop) { self.loop = loop }

        var currentItemIdentifier: String? { "film" }

        func playbackCoordinator(_ coordinator: PlaybackCoordinator, didIssue command: PlaybackCommand,
                                 completion: @escaping @Sendable () -> Void) {
            let onLoop = loop.inLoop
            counts.withLock { if onLoop { $0.onLoop += 1 } else { $0.elsewhere += 1 } }
            log.withLock { log in
                log.append(command)
                issued = log
            }
            completion()
        }

        var onLoop: Int { counts.withLock { $0.onLoop } }
        var elsewhere: Int { counts.withLock { $0.elsewhere } }
    }

    struct Member {
        let session: GroupSession<WatchTogether>
        let coordinator: PlaybackCoordinator
        let player: LoopWitness
    }

    static func member(_ name: String, relay: TestRelay, invitation: Invitation?) async throws -> Member {
        let session = try await CoordinatingPlaybackArticleIOTests.joined(name, relay: relay, invitation: invitation)
        let player = LoopWitness(loop: session.participantLoop)
        let coordinator = PlaybackCoordinator(delegate: player)
        coordinator.coordinateWithSession(session)
        return Member(session: session, coordinator: coordinator, player: player)
    }

    static func plays(_ commands: [PlaybackCommand]) -> Bool {
        commands.contains { if case .play = $0 { true } else { false } }
    }

    @Test func aSessionsCoordinatorRunsOnTheSessionsLoop() async throws {
        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        let host = try await Self.member("host", relay: relay, invitation: nil)
        let ana = try await Self.member("ana", relay: relay, invitation: host.session.invitation)
        // Each coordinator's executor is its session's loop: no dispatch queue of its own.
        for member in [host, ana] {
            let scheduler = try #require(member.coordinator.scheduler as? LoopScheduler, "\(member.coordinator.scheduler)")
            #expect(scheduler.loop === member.session.participantLoop)
        }

        try host.coordinator.transitionToItem(identifier: "film")
        host.coordinator.coordinateRateChange(to: 1)
        #expect(await awaitValue(ana.player.$issued.values) { Self.plays($0) })
        #expect(await awaitValue(host.player.$issued.values) { Self.plays($0) })
        ana.coordinator.coordinateSeek(to: .zero + .seconds(10))
        #expect(await awaitTimeline(of: host.coordinator) { $0.anchorMediaTime == .zero + .seconds(10) && $0.rate == 1 })
        #expect(await awaitValue(host.player.$issued.values) { commands in
            commands.contains { if case .play(let play) = $0 { play.timeline.anchorMediaTime == .zero + .seconds(10) } else { false } }
        })
        // Every command, each completed before its delegate returned, was issued on the loop.
        for member in [host, ana] {
            #expect(member.player.onLoop >= 2)
            #expect(member.player.elsewhere == 0)
        }
    }

    /// The deprecated path, on purpose: a coordinator given a `DispatchCoordinatorScheduler`
    /// still coordinates with a session, on that queue rather than on the session's loop.
    @available(*, deprecated, message: "covers DispatchCoordinatorScheduler")
    @Test func aCoordinatorGivenADispatchSchedulerRunsOnIt() async throws {
        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        let host = try await Self.member("host", relay: relay, invitation: nil)
        let session = try await CoordinatingPlaybackArticleIOTests.joined("ana", relay: relay, invitation: host.session.invitation)
        let player = LoopWitness(loop: session.participantLoop)
        let coordinator = PlaybackCoordinator(delegate: player, scheduler: DispatchCoordinatorScheduler())
        coordinator.coordinateWithSession(session)
        #expect(coordinator.scheduler is DispatchCoordinatorScheduler)
        try host.coordinator.transitionToItem(identifier: "film")
        host.coordinator.coordinateRateChange(to: 1)
        #expect(await awaitValue(player.$issued.values) { Self.plays($0) })
        #expect(player.onLoop == 0 && player.elsewhere >= 1)
    }

    @Test func aDepartureReachesTheCoordinatorOnTheLoop() async throws {
        let relay = try TestRelay(.inMemory)
        defer { relay.shutdown() }
        let host = try await Self.member("host", relay: relay, invitation: nil)
        let ana = try await Self.member("ana", relay: relay, invitation: host.session.invitation)
        try host.coordinator.transitionToItem(identifier: "film")
        host.coordinator.coordinateRateChange(to: 1)
        #expect(await awaitTimeline(of: ana.coordinator) { $0.rate == 1 })
        // Ana stalls: the group waits for her.
        let waiting = host.coordinator.events
        _ = ana.coordinator.beginSuspension(for: .stallRecovery)
        #expect(await awaitValue(waiting) { if case .groupWaiting = $0 { true } else { false } })
        // She leaves without ending her suspension: the host's coordinator hears of her departure
        // from its session, on the loop, and the group resumes without her.
        let resumed = host.coordinator.events
        ana.session.leave()
        #expect(await awaitValue(resumed) { if case .groupResumed = $0 { true } else { false } })
        #expect(host.coordinator.core.suspensions.isEmpty)
        #expect(host.player.elsewhere == 0)
    }
}
