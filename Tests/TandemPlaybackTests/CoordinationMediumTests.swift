import Foundation
import Testing
import Tandem
import TandemClock
@testable import TandemPlayback

/// Coordinators connected to one `PlaybackCoordinationMedium`, in virtual time: one
/// `VirtualScheduler` runs every coordinator's shell, the medium orders on its clock, and each
/// coordinator drives a `ScriptedPlayer`. No relay, no session, no sleep.
@Suite struct CoordinationMediumTests {
    static let ms: Int64 = 1_000_000
    static let second: Int64 = 1_000_000_000

    /// The virtual scheduler's clock, which is the host clock too.
    struct HostClock: MonotonicDerivedClock {
        let scheduler: VirtualScheduler
        func now() -> Int64 { scheduler.now.nanoseconds }
        func monotonicTime(atLocal localTime: Int64) -> Int64 { localTime }
        func localTime(atMonotonic monotonicTime: Int64) -> Int64 { monotonicTime }
    }

    /// A channel that is no medium's, as a session's is: it takes proposals and delivers nothing.
    struct SessionLikeChannel: CoordinationChannel {
        let localParticipant = UUID()
        let hostClock: HostClock
        func propose(_ proposal: PlaybackProposal) throws {}
        func deliverOrdered(while wanted: @escaping @Sendable () -> Bool, to receive: @escaping @Sendable (OrderedInput) -> Void) {}
        var clock: (any SessionClockSource)? { nil }
        var localClock: any MonotonicDerivedClock { hostClock }
    }

    /// A medium and the coordinators connected to it, on one virtual scheduler.
    final class Wall {
        let scheduler = VirtualScheduler(now: hostNS(100 * CoordinationMediumTests.second))
        let medium: PlaybackCoordinationMedium
        private(set) var screens: [(coordinator: PlaybackCoordinator, player: ScriptedPlayer)] = []

        init() { medium = PlaybackCoordinationMedium(clock: HostClock(scheduler: scheduler)) }

        /// A coordinator driving a player on "film", connected to the medium as Apple's pattern
        /// connects one; `completionDelay` nil: its player never completes a command.
        @discardableResult
        func connect(completionDelay: TimeSpan? = .milliseconds(20)) throws -> (coordinator: PlaybackCoordinator, player: ScriptedPlayer) {
            let player = ScriptedPlayer(item: "film", identity: "d=60.000;h=aa", scheduler: scheduler, completionDelay: completionDelay)
            let coordinator = PlaybackCoordinator(delegate: player, scheduler: scheduler)
            try coordinator.coordinate(using: medium)
            screens.append((coordinator, player))
            return (coordinator, player)
        }

        func run(for milliseconds: Int64) { scheduler.advance(by: TimeSpan(nanoseconds: milliseconds * CoordinationMediumTests.ms)) }

        /// Each screen's last play or pause command.
        var lastTransports: [PlaybackCommand?] { screens.map(\.player.lastTransport) }
    }

    /// The instant and the media time of a play or a pause.
    static func when(_ command: PlaybackCommand?) -> (HostInstant, ItemTime, Double)? {
        switch command {
        case .play(let play): (play.hostTime, play.itemTime, play.rate)
        case .pause(let pause): (pause.hostTime, pause.itemTime, 0)
        default: nil
        }
    }

    /// Every screen's last transport command is the same change at the same instant.
    static func inStep(_ wall: Wall, rate: Double, sourceLocation: SourceLocation = #_sourceLocation) {
        let all = wall.lastTransports.map(when)
        guard let first = all.first ?? nil else {
            Issue.record("no command", sourceLocation: sourceLocation)
            return
        }
        for other in all {
            #expect(other?.0 == first.0 && other?.1 == first.1 && other?.2 == rate, "\(String(describing: other)) vs \(first)",
                    sourceLocation: sourceLocation)
        }
    }

    @Test func aPlayAPauseASeekAndARateFromAnyScreenReachEveryScreenAtOneInstant() throws {
        let wall = Wall()
        for _ in 0..<3 { try wall.connect() }
        wall.run(for: 100)
        #expect(wall.medium.connectedPlaybackCoordinators.count == 3)
        #expect(wall.screens.allSatisfy { $0.coordinator.playbackCoordinationMedium === wall.medium && $0.coordinator.isCoordinating })

        let asked = wall.scheduler.now
        wall.screens[1].coordinator.coordinateRateChange(to: 1)
        wall.run(for: 500)
        Self.inStep(wall, rate: 1)
        // Played soon (every screen pre-rolled), not at the pre-roll gate's one-second deadline.
        let play = try #require(Self.when(wall.screens[0].player.lastTransport))
        #expect(play.0 > asked && play.0 < asked + .milliseconds(300))

        wall.screens[2].coordinator.coordinateSeek(to: ItemTime(nanoseconds: 30 * Self.second))
        wall.run(for: 500)
        Self.inStep(wall, rate: 1)
        let sought = try #require(Self.when(wall.screens[1].player.lastTransport))
        #expect(sought.1 == ItemTime(nanoseconds: 30 * Self.second))

        wall.screens[0].coordinator.coordinateRateChange(to: 2)
        wall.run(for: 500)
        Self.inStep(wall, rate: 2)

        wall.screens[1].coordinator.coordinateRateChange(to: 0)
        wall.run(for: 500)
        Self.inStep(wall, rate: 0)
        #expect(wall.screens.allSatisfy { $0.coordinator.timeline == wall.screens[0].coordinator.timeline })
        #expect(wall.screens.allSatisfy { $0.coordinator.timeline.rate == 0 })
    }

    @Test func aLateConnectionComesInWhereTheOthersAre() throws {
        let wall = Wall()
        for _ in 0..<3 { try wall.connect() }
        wall.run(for: 100)
        wall.screens[0].coordinator.coordinateRateChange(to: 1)
        wall.run(for: 300)
        wall.screens[1].coordinator.coordinateSeek(to: ItemTime(nanoseconds: 20 * Self.second))
        wall.run(for: 2_000)

        let connected = wall.scheduler.now
        let late = try wall.connect()
        wall.run(for: 500)
        #expect(late.coordinator.timeline == wall.screens[0].coordinator.timeline)
        #expect(late.coordinator.core.timeline == wall.screens[0].coordinator.core.timeline)
        let play = try #require(Self.when(late.player.lastTransport))
        // In the future (to pre-roll), on the shared timeline, at the group's rate.
        #expect(play.0 > connected)
        #expect(play.2 == 1)
        #expect(play.1 == wall.screens[0].coordinator.timeline.mediaTime(atSessionTime: SessionInstant(nanoseconds: play.0.nanoseconds)))
        #expect(play.1 > ItemTime(nanoseconds: 22 * Self.second))
        #expect(wall.medium.connectedPlaybackCoordinators.count == 4)
    }

    @Test func aDisconnectedScreenStopsFollowingAndTheOthersGoOn() throws {
        let wall = Wall()
        for _ in 0..<3 { try wall.connect() }
        wall.run(for: 100)
        wall.screens[0].coordinator.coordinateRateChange(to: 1)
        wall.run(for: 500)
        Self.inStep(wall, rate: 1)

        let gone = wall.screens[2]
        try gone.coordinator.coordinate(using: nil)
        #expect(!gone.coordinator.isCoordinating)
        #expect(gone.coordinator.playbackCoordinationMedium == nil)
        #expect(wall.medium.connectedPlaybackCoordinators.count == 2)
        #expect(!wall.medium.connectedPlaybackCoordinators.contains { $0 === gone.coordinator })
        let commandsBefore = gone.player.commands.count

        wall.screens[1].coordinator.coordinateRateChange(to: 0)
        wall.run(for: 500)
        #expect(wall.screens[0].coordinator.timeline.rate == 0)
        #expect(Self.when(wall.screens[0].player.lastTransport)?.2 == 0)
        #expect(gone.player.commands.count == commandsBefore, "a disconnected screen was still driven")
        #expect(gone.coordinator.timeline.rate == 1)

        // Its own requests go to no one: refused, as a coordinator's that coordinates with nothing.
        #expect(throws: CoordinatorError.self) { try gone.coordinator.proposeRateChange(to: 2) }
        wall.run(for: 500)
        #expect(wall.screens[0].coordinator.timeline.rate == 0)

        // Connecting again brings it back where the others are.
        try gone.coordinator.coordinate(using: wall.medium)
        wall.run(for: 500)
        #expect(gone.coordinator.timeline == wall.screens[0].coordinator.timeline)
        #expect(wall.medium.connectedPlaybackCoordinators.count == 3)
    }

    @Test func aScreenThatIsNotReadyHoldsTheOthersWhenThePolicySaysSo() throws {
        // The pre-roll gate: one screen whose player never completes the seek ahead of the play
        // holds the play up to the gate's deadline; the others play together then.
        let gated = Wall()
        try gated.connect()
        try gated.connect()
        try gated.connect(completionDelay: nil)
        gated.run(for: 100)
        let asked = gated.scheduler.now
        gated.screens[0].coordinator.coordinateRateChange(to: 1)
        gated.run(for: 2_000)
        let heldPlay = try #require(Self.when(gated.screens[0].player.lastTransport))
        #expect(heldPlay.0 >= asked + .milliseconds(900), "the play did not wait for the screen that was not ready")
        #expect(Self.when(gated.screens[1].player.lastTransport)?.0 == heldPlay.0)

        // A stall of a screen whose policy waits for stalls holds the others; ended, all play on.
        let wall = Wall()
        for _ in 0..<3 { try wall.connect() }
        wall.run(for: 100)
        wall.screens[0].coordinator.coordinateRateChange(to: 1)
        wall.run(for: 500)
        Self.inStep(wall, rate: 1)
        let stall = wall.screens[2].coordinator.beginSuspension(for: .stallRecovery)
        wall.run(for: 300)
        #expect(wall.screens.allSatisfy { $0.coordinator.core.isWaiting && $0.coordinator.core.timeline.rate == 0 })
        #expect(Self.when(wall.screens[0].player.lastTransport)?.2 == 0)
        stall.end()
        wall.run(for: 1_500)
        #expect(wall.screens.allSatisfy { !$0.coordinator.core.isWaiting && $0.coordinator.core.timeline.rate == 1 })
        #expect(Self.when(wall.screens[0].player.lastTransport)?.2 == 1)
        #expect(Self.when(wall.screens[0].player.lastTransport)?.0 == Self.when(wall.screens[1].player.lastTransport)?.0)

        // A screen whose policy does not wait for stalls holds no one.
        wall.screens[2].coordinator.suspensionReasonsThatTriggerWaiting = []
        let unheld = wall.screens[2].coordinator.beginSuspension(for: .stallRecovery)
        wall.run(for: 300)
        #expect(wall.screens.allSatisfy { !$0.coordinator.core.isWaiting && $0.coordinator.core.timeline.rate == 1 })
        unheld.end()
    }

    @Test func aCoordinatorFollowsASessionOrAMediumNotBoth() throws {
        let wall = Wall()
        let screen = try wall.connect()
        // Connecting to the medium it is connected to changes nothing.
        try screen.coordinator.coordinate(using: wall.medium)
        #expect(wall.medium.connectedPlaybackCoordinators.count == 1)
        // Another medium: it leaves the first.
        let other = PlaybackCoordinationMedium(clock: HostClock(scheduler: wall.scheduler))
        try screen.coordinator.coordinate(using: other)
        #expect(wall.medium.connectedPlaybackCoordinators.isEmpty)
        #expect(other.connectedPlaybackCoordinators.count == 1)
        #expect(screen.coordinator.playbackCoordinationMedium === other)
        // Coordinating with a session (here a scripted channel), it refuses a medium.
        let sessionCoordinator = PlaybackCoordinator(scheduler: wall.scheduler)
        sessionCoordinator.coordinate(over: SessionLikeChannel(hostClock: HostClock(scheduler: wall.scheduler)))
        #expect(throws: CoordinatorError.self) { try sessionCoordinator.coordinate(using: wall.medium) }
        #expect(wall.medium.connectedPlaybackCoordinators.isEmpty)
    }

    @Test func aConnectionThatIsNoLongerTheMediumsIsRefusedAndTheOthersGoOn() throws {
        let wall = Wall()
        for _ in 0..<2 { try wall.connect() }
        wall.run(for: 100)
        // A connection the medium never made, and one whose coordinator disconnected.
        let stranger = MediumChannel(medium: wall.medium, localParticipant: UUID())
        #expect(throws: CoordinatorError.self) { try stranger.propose(.setRate(1)) }
        let left = try #require(wall.screens[1].coordinator.currentChannel as? MediumChannel)
        try wall.screens[1].coordinator.coordinate(using: nil)
        #expect(throws: CoordinatorError.self) { try left.propose(.setRate(1)) }
        wall.run(for: 500)
        #expect(wall.screens[0].coordinator.timeline.rate == 0)
        // A snapshot that claims to reflect an order not given yet is refused, as a relay refuses it.
        let member = try #require(wall.screens[0].coordinator.currentChannel as? MediumChannel)
        var snapshot = CoordinationSnapshot(core: wall.screens[0].coordinator.core)
        snapshot.core.timeline.version = 1_000_000
        #expect(throws: CoordinatorError.self) { try member.publish(snapshot) }
        // The medium goes on.
        wall.screens[0].coordinator.coordinateRateChange(to: 1)
        wall.run(for: 500)
        #expect(wall.screens[0].coordinator.timeline.rate == 1)
        #expect(wall.medium.connectedPlaybackCoordinators.count == 1)
    }

    @Test func snapshotsKeepTheHistoryALateConnectionIsHandedShort() throws {
        let wall = Wall()
        for _ in 0..<2 { try wall.connect() }
        wall.run(for: 100)
        for step in 0..<20 {
            wall.screens[step % 2].coordinator.coordinateRateChange(to: step.isMultiple(of: 2) ? 1 : 0)
            wall.run(for: 200)
        }
        let before = wall.medium.historyCount
        // A snapshot is due a minute after the last (`SnapshotSchedule`); one more change then.
        wall.run(for: 61_000)
        wall.screens[0].coordinator.coordinateRateChange(to: 1)
        wall.run(for: 2_000)
        // The history holds the last snapshot and what came after it.
        #expect(before > 30)
        #expect(wall.medium.historyCount < 10, "history of \(wall.medium.historyCount) records, \(before) before the snapshot")
        let late = try wall.connect()
        wall.run(for: 500)
        #expect(late.coordinator.core.timeline == wall.screens[0].coordinator.core.timeline)
        #expect(late.coordinator.core.timeline.rate == 1)
        #expect(late.player.lastTransport.flatMap { if case .play = $0 { true } else { nil } } == true)
    }
}
