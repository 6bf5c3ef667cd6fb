import Foundation
import Synchronization
import Testing
import Tandem
import TandemClock
import TandemNet
import TandemTestKit
@testable import TandemPlayback

/// A request of this participant's (a key press's play, a seek) is checked against the
/// coordinator's machine, checked against the session's policy and sent, in one call on the
/// participant's loop: a caller on another thread hops onto the loop and waits there for the
/// answer, so that a refusal is still thrown to it; a caller on the loop (a delegate) is answered
/// at once. In virtual time, on a `VirtualRelayWorld`'s loop.
@Suite struct CoordinatorRequestLoopTests {
    /// The participant's loop as a caller off it sees a loop that a thread of its own drives:
    /// work handed to it from off the loop runs on the loop before `execute` returns (the
    /// embedded loop is driven there and then), so that a caller that waits for it is answered
    /// as by a running loop, deterministically.
    final class DrivenLoop: SerialEventLoop, @unchecked Sendable {
        let base: SkewedEventLoop
        let driver: EmbeddedEventLoop
        /// How many pieces of work were handed to the loop from off it.
        let hops = Atomic<Int>(0)

        init(base: SkewedEventLoop, driver: EmbeddedEventLoop) {
            self.base = base
            self.driver = driver
        }

        var clock: any LocalClock { base.clock }
        var tickInterval: TimeSpan { base.tickInterval }
        var inLoop: Bool { base.inLoop }
        /// A caller off the loop finds it driven by another thread.
        var drivenElsewhere: Bool { !base.inLoop }

        func execute(_ task: @escaping @Sendable () -> Void) {
            base.execute(task)
            guard !base.inLoop else { return }
            hops.add(1, ordering: .relaxed)
            driver.run()
        }

        @discardableResult
        func schedule(at deadline: LocalInstant, _ task: @escaping @Sendable () -> Void) -> ScheduledTask { base.schedule(at: deadline, task) }
        @discardableResult
        func addTicker(_ body: @escaping (LocalInstant) -> Void) -> UInt64 { base.addTicker(body) }
        func removeTicker(_ id: UInt64) { base.removeTicker(id) }
        func preconditionInLoop(_ function: StaticString, file: StaticString, line: UInt) {
            base.preconditionInLoop(function, file: file, line: line)
        }
    }

    /// A host coordinating over its link on `DrivenLoop`, and a second participant's link.
    struct Setup {
        let world: VirtualRelayWorld
        let loop: DrivenLoop
        let channel: LinkChannel
        let coordinator: PlaybackCoordinator
        let player: ScriptedPlayer

        init() throws {
            world = VirtualRelayWorld()
            let host = try world.join("host")
            try world.join("ana")
            loop = DrivenLoop(base: host.loop, driver: world.loop)
            channel = LinkChannel(host, loop: loop)
            player = ScriptedPlayer(item: "film", identity: "d=60.000;h=aa", scheduler: LoopCoordinatorScheduler(loop: host.loop),
                                    loop: host.loop)
            coordinator = PlaybackCoordinator(delegate: player, waitsForPreroll: false)
            coordinator.coordinate(over: channel)
            coordinator.reportDelegateItem()
            world.advance(by: 200 * VirtualCoordinatedGroup.ms)
        }
    }

    @Test func aRequestFromOffTheLoopIsCheckedAndSentOnTheLoopBeforeTheCallReturns() throws {
        let setup = try Setup()
        defer { setup.world.shutdown() }
        // The item's report went the same way, on the loop.
        #expect(setup.channel.calls.withLock { $0 } == [.init(kind: .policy, onLoop: true), .init(kind: .propose, onLoop: true)])
        setup.channel.calls.withLock { $0.removeAll() }
        let hops = setup.loop.hops.load(ordering: .relaxed)

        try setup.coordinator.proposeRateChange(to: 1)
        // Checked and sent in one hop, on the loop, before the caller got its answer.
        #expect(setup.loop.hops.load(ordering: .relaxed) == hops + 1)
        #expect(setup.channel.calls.withLock { $0 } == [.init(kind: .policy, onLoop: true), .init(kind: .propose, onLoop: true)])
        setup.world.advance(by: 300 * VirtualCoordinatedGroup.ms)
        #expect(setup.coordinator.timeline.rate == 1)
        #expect(setup.player.plays.count == 1)
        #expect(setup.player.commandsOffLoop == 0)
    }

    @Test func aRefusalDecidedOnTheLoopIsThrownToTheCaller() throws {
        let setup = try Setup()
        defer { setup.world.shutdown() }
        setup.channel.calls.withLock { $0.removeAll() }

        // The machine's own check, on the loop: nothing reaches the policy or the link.
        #expect(throws: ProposalRejection.self) { try setup.coordinator.proposeRateChange(to: .nan) }
        #expect(setup.channel.calls.withLock { $0 }.isEmpty)
        // The session's policy, asked on the loop once the machine let the seek through.
        setup.channel.refusal.withLock { $0 = ProposalRejection(.notPermitted, "only operators may seek") }
        let refusal = #expect(throws: ProposalRejection.self) { try setup.coordinator.proposeSeek(to: .zero + .seconds(5)) }
        #expect(refusal?.detail == "only operators may seek")
        #expect(setup.channel.calls.withLock { $0 } == [.init(kind: .policy, onLoop: true)])
        // Nothing went to the group.
        setup.world.advance(by: 300 * VirtualCoordinatedGroup.ms)
        #expect(setup.coordinator.timeline.anchorMediaTime == .zero)
        #expect(setup.channel.calls.withLock { $0 }.count == 1)
    }

    /// A player that asks the group to pause from within the first play command it is issued,
    /// on the loop, as a player whose own transport changes while it carries out a command.
    final class PausingPlayer: PlaybackCoordinatorDelegate, @unchecked Sendable {
        let scripted: ScriptedPlayer
        let pausedFromCommand = Mutex<Result<Void, any Error>?>(nil)
        init(_ scripted: ScriptedPlayer) { self.scripted = scripted }
        var currentItemIdentifier: String? { scripted.currentItemIdentifier }
        var currentItemIdentity: String? { scripted.currentItemIdentity }
        func playbackCoordinator(_ coordinator: PlaybackCoordinator, didIssue command: PlaybackCommand,
                                 completion: @escaping @Sendable () -> Void) {
            scripted.playbackCoordinator(coordinator, didIssue: command, completion: completion)
            guard case .play = command, pausedFromCommand.withLock({ $0 == nil }) else { return }
            let result = Result { try coordinator.proposeRateChange(to: 0) }
            pausedFromCommand.withLock { $0 = result }
        }
    }

    @Test func aRequestOnTheLoopIsAnsweredThereWithoutAHop() throws {
        let setup = try Setup()
        defer { setup.world.shutdown() }
        let pausing = PausingPlayer(setup.player)
        setup.coordinator.delegate = pausing
        setup.channel.calls.withLock { $0.removeAll() }
        let hops = setup.loop.hops.load(ordering: .relaxed)
        try setup.coordinator.proposeRateChange(to: 1)

        setup.world.advance(by: 300 * VirtualCoordinatedGroup.ms)
        // The play came; from within its command, on the loop, the pause was checked and sent
        // there and then, in the same call: no hop, no wait on the loop from the loop. The one
        // hop is the play's, asked for from off the loop.
        let outcome = try #require(pausing.pausedFromCommand.withLock { $0 })
        #expect(throws: Never.self) { try outcome.get() }
        #expect(setup.loop.hops.load(ordering: .relaxed) == hops + 1)
        #expect(setup.channel.calls.withLock { $0 } == Array(repeating: [.init(kind: .policy, onLoop: true), .init(kind: .propose, onLoop: true)],
                                                              count: 2).flatMap { $0 })
        setup.world.advance(by: 300 * VirtualCoordinatedGroup.ms)
        #expect(setup.coordinator.timeline.rate == 0)
        #expect(setup.player.commandsOffLoop == 0)
    }
}
