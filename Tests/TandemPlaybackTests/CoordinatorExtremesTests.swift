import Foundation
import Synchronization
import Testing
import Tandem
import TandemClock
@testable import TandemPlayback

/// The coordinator's mapping of the shared timeline to host time when a lying relay stamps a
/// valid change at the end of time: the instant is taken within a day of the session clock's
/// present before the clock maps it (a real clock's mapping, as the one here, would overflow),
/// and the player is issued a command, not a crash.
@Suite struct CoordinatorExtremesIOTests {
    /// A session clock 1000 s behind the local one, whose mapping traps on overflow as plain
    /// arithmetic does.
    struct TrappingClock: SessionClockSource {
        static let offset: Int64 = 1_000_000_000_000
        func sessionTime(atLocal localTime: Int64) -> Int64? { localTime - Self.offset }
        func localTime(atSession sessionTime: Int64) -> Int64? { sessionTime + Self.offset }
        func errorBound(atLocal localTime: Int64) -> Int64? { 0 }
        func stop() {}
    }

    /// A channel that hands the coordinator the records a test gives it.
    final class ScriptedChannel: CoordinationChannel, @unchecked Sendable {
        let receiver = Mutex<(@Sendable (OrderedInput) -> Void)?>(nil)
        let localParticipant = UUID()
        func propose(_ proposal: PlaybackProposal) throws {}
        func deliverOrdered(while wanted: @escaping @Sendable () -> Bool, to receive: @escaping @Sendable (OrderedInput) -> Void) {
            receiver.withLock { $0 = { input in if wanted() { receive(input) } } }
        }
        /// Delivers `input` as a session does: on the caller's thread, straight to the coordinator.
        func feed(_ input: OrderedInput) { receiver.withLock { $0 }?(input) }
        var clock: (any SessionClockSource)? { TrappingClock() }
        var localClock: any MonotonicDerivedClock { SystemClock() }
    }

    final class CommandLog: PlaybackCoordinatorDelegate, @unchecked Sendable {
        let commands = Mutex<[PlaybackCommand]>([])
        var currentItemIdentifier: String? { "film" }
        func playbackCoordinator(_ coordinator: PlaybackCoordinator, didIssue command: PlaybackCommand,
                                 completion: @escaping @Sendable () -> Void) {
            commands.withLock { $0.append(command) }
            completion()
        }
        var all: [PlaybackCommand] { commands.withLock { $0 } }
    }

    @Test func instantsAreMappedWithinADayOfThePresent() {
        let now: SessionInstant = 5_000_000_000_000
        let span = PlaybackCoordinator.mappableSpan
        #expect(CoordinatorMachine.mappable(.max, near: now) == now + span)
        #expect(CoordinatorMachine.mappable(.min, near: now) == now - span)
        #expect(CoordinatorMachine.mappable(now + 1_000, near: now) == now + 1_000)
        #expect(CoordinatorMachine.mappable(0, near: .max) == SessionInstant.max - span)
        #expect(CoordinatorMachine.mappable(0, near: .min) == SessionInstant.min + span)
    }

    @Test func aChangeStampedAtTheEndOfTimeIsIssuedWithoutOverflow() async throws {
        let log = CommandLog()
        // Virtual time on the host's clock as it is now: the shell's work runs when the test says.
        let scheduler = VirtualScheduler(now: hostNS(SystemClock().instant().nanoseconds))
        let coordinator = PlaybackCoordinator(delegate: log, scheduler: scheduler)
        let channel = ScriptedChannel()
        coordinator.coordinate(over: channel)
        let ana = UUID()
        let end = SessionInstant.max - .seconds(1)
        channel.feed(.proposal(OrderedProposal(originator: ana, order: 1, orderedAt: 0, effectiveAt: 50_000_000,
                                                     proposal: .transition(item: "film", at: 0))))
        // Valid on its face (effective half a second after it was ordered), but at the end of time.
        channel.feed(.proposal(OrderedProposal(originator: ana, order: 2, orderedAt: end, effectiveAt: end + .milliseconds(500),
                                                     proposal: .setRate(1))))
        scheduler.run()
        #expect(log.all.contains { if case .play = $0 { true } else { false } })
        guard case .play(let play)? = log.all.last else {
            Issue.record("no play command: \(log.all)")
            return
        }
        // Due a day from now at the latest, on the local clock.
        let now = hostNS(SystemClock().instant().nanoseconds)
        #expect(play.hostTime > now && play.hostTime <= now + PlaybackCoordinator.mappableSpan + .seconds(1))
        #expect(coordinator.timeline.anchorSessionTime == end + .milliseconds(500))
        // Every way of asking the coordinator where the timeline is answers.
        _ = coordinator.expectedItemTime(atLocalTime: LocalInstant(nanoseconds: now.nanoseconds))
        _ = coordinator.expectedItemTime(atHostTime: now)
        #expect(coordinator.localTime(atSessionTime: .max) != nil)
        #expect(coordinator.localTime(atSessionTime: .min) != nil)
    }

    /// One hop: a record the channel delivers is on the coordinator's scheduler when the
    /// delivering call returns (no task reads a stream in between), in the order delivered.
    @Test func aDeliveredRecordIsOnTheSchedulerWhenTheDeliveryReturns() {
        let scheduler = VirtualScheduler(now: hostNS(SystemClock().instant().nanoseconds))
        let coordinator = PlaybackCoordinator(delegate: CommandLog(), scheduler: scheduler)
        let channel = ScriptedChannel()
        coordinator.coordinate(over: channel)
        scheduler.run()
        #expect(scheduler.pendingCount == 0)
        let ana = UUID()
        let now = SessionInstant(nanoseconds: SystemClock().instant().nanoseconds - TrappingClock.offset)
        for order in UInt64(1)...3 {
            channel.feed(.proposal(OrderedProposal(originator: ana, order: order, orderedAt: now, effectiveAt: now + .milliseconds(50),
                                                   proposal: order == 1 ? .transition(item: "film", at: 0) : .seek(to: ItemTime(nanoseconds: Int64(order) * 1_000_000_000)))))
            #expect(scheduler.pendingCount == Int(order))
        }
        #expect(coordinator.timeline.version == 0)
        scheduler.run()
        #expect(coordinator.timeline.version == 3)
        #expect(coordinator.timeline.anchorMediaTime.nanoseconds == 3_000_000_000)
    }
}
