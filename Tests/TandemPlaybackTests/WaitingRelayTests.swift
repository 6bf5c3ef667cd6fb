import Foundation
import Synchronization
import Testing
import TandemClock
import TandemNet
import TandemTestKit
@testable import TandemPlayback

/// A `CoordinatorScheduler` on a world participant's loop: its time is the participant's
/// virtual local (host) clock, which moves only when the test advances the world.
struct LoopCoordinatorScheduler: CoordinatorScheduler {
    let loop: SkewedEventLoop
    var now: HostInstant { HostInstant(nanoseconds: loop.localClock.instant().nanoseconds) }
    func execute(_ work: @escaping @Sendable () -> Void) { loop.execute(work) }
    func schedule(at instant: HostInstant, _ work: @escaping @Sendable () -> Void) -> any CoordinatorCancellable {
        // The skewed loop takes its participant's local instant (it maps it to the loop's).
        Cancellable(task: loop.schedule(at: LocalInstant(nanoseconds: instant.nanoseconds), work))
    }

    private struct Cancellable: CoordinatorCancellable {
        let task: ScheduledTask
        func cancel() { task.cancel() }
    }
}

/// One participant of a `VirtualRelayWorld` run by a `CoordinatorMachine`: the test carries out
/// its directives as the shell would (proposals through the participant's relay link, commands to
/// a player that completes them `completionDelay` after issue, or never; wake-ups on the
/// participant's loop). Everything happens on the test's thread, in virtual time.
final class MachinePeer: @unchecked Sendable {
    let participant: VirtualRelayWorld.Participant
    let scheduler: LoopCoordinatorScheduler
    var machine: CoordinatorMachine
    /// How long the player takes to complete a command (nil: never).
    var completionDelay: Int64?
    private(set) var commands: [PlaybackCommand] = []
    private(set) var events: [CoordinationCore.Event] = []
    private var fed = 0
    private var departuresSeen = 0
    private var pending: [(id: UInt64, at: Int64)] = []
    private var wake: Int64?

    init(_ participant: VirtualRelayWorld.Participant, world: VirtualRelayWorld, completionDelay: Int64? = 50_000_000) {
        self.participant = participant
        scheduler = LoopCoordinatorScheduler(loop: participant.loop)
        self.completionDelay = completionDelay
        machine = CoordinatorMachine(localParticipant: participant.id, waitsForPreroll: true)
        // No offset, no drift: host time is session time.
        carry(machine.onClockMapping(ClockMapping(session: SessionInstant(nanoseconds: world.now), host: scheduler.now,
                                                  sessionSecondsPerHostSecond: 1), now: scheduler.now).map(Self.effect))
    }

    var now: HostInstant { scheduler.now }
    var id: UUID { participant.id }
    var core: CoordinationCore { machine.core }
    /// The last play command issued from the item's start (the play itself, before re-maps).
    var startingPlay: PlayCommand? { plays.last { $0.itemTime == .zero } }
    /// Whether every play command issued is on the shared timeline (zero offset: host time is session time).
    var playsFollowTheTimeline: Bool {
        plays.allSatisfy { $0.itemTime == $0.timeline.mediaTime(atSessionTime: SessionInstant(nanoseconds: $0.hostTime.nanoseconds)) }
    }
    var plays: [PlayCommand] { commands.compactMap { if case .play(let play) = $0 { play } else { nil } } }
    var lastPlay: PlayCommand? { commands.last { if case .play = $0 { true } else { false } }.flatMap { if case .play(let play) = $0 { play } else { nil } } }

    func request(_ request: CoordinatorMachine.LocalRequest) throws {
        for case .propose(let proposal) in try machine.onLocalRequest(request, now: now) { send(proposal) }
    }

    func beginSuspension(_ id: UUID, _ reason: SuspensionReason) { carry(machine.onSuspensionBegan(id, reason: reason, now: now).map(Self.effect)) }
    func endSuspension(_ id: UUID) { carry(machine.onSuspensionEnded(id, proposingNewTime: nil, now: now).map(Self.effect)) }

    /// Feeds what arrived and what fell due.
    func pump() {
        let deliveries = participant.welcome.orderedHistory + participant.ordered
        while fed < deliveries.count {
            let delivery = deliveries[fed]
            fed += 1
            carry(machine.onOrdered(Self.input(delivery), now: now).map(Self.effect))
        }
        let left = participant.events.compactMap { if case .participantLeft(let id) = $0 { id } else { nil } }
        while departuresSeen < left.count {
            let gone = left[departuresSeen]
            departuresSeen += 1
            for case .propose(let proposal) in machine.onDeparture(gone, now: now) { send(proposal) }
        }
        for due in pending where due.at <= now.nanoseconds {
            pending.removeAll { $0.id == due.id }
            carry(machine.onCommandCompleted(due.id, now: now).map(Self.effect))
        }
        if let instant = wake, instant <= now.nanoseconds {
            wake = nil
            carry(machine.onTick(now: now).map(Self.effect))
        }
    }

    private func send(_ proposal: PlaybackProposal) {
        try? participant.link.sendOrdered(Array(try! JSONEncoder().encode(proposal)), retention: .playback)
    }

    /// The record as a session's channel hands it to the coordinator (`OrderedInput.init`).
    static func input(_ delivery: OrderedDelivery) -> OrderedInput { OrderedInput(delivery) }

    /// The machine's directives, as `PlaybackCoordinator` carries them out (`CoordinatorMachine.Directive`).
    typealias Effect = CoordinatorMachine.Directive

    private func carry(_ effects: [Effect]) {
        for effect in effects {
            switch effect {
            case .propose(let proposal): send(proposal)
            case .publishSnapshot(let snapshot):
                if let body = try? snapshot.encoded() {
                    try? participant.link.sendOrdered(body, retention: .snapshot(reflecting: snapshot.reflecting))
                }
            case .emit(let event): events.append(event)
            case .abandon(let issued): pending.removeAll { $0.id == issued.id }
            case .wake(let instant): wake = instant.nanoseconds
            case .issue(let issued):
                commands.append(issued.command)
                if let completionDelay { pending.append((issued.id, now.nanoseconds + completionDelay)) }
            }
        }
    }

    static func effect(_ directive: some CoordinatorDirective) -> Effect { directive.directive }
}

/// The coordinator's waiting through the in-memory relay, in virtual time: the pre-roll gate
/// (a slow participant, the deadline, a departure), the stall policy, a late joiner and bad
/// proposals. No sleep: the world's time moves only when the test advances it, a millisecond
/// at a time, and each participant's machine is fed what arrived.
@Suite struct WaitingRelayTests {
    static let ms: Int64 = 1_000_000
    static let identity = "d=60.000;h=aa"

    /// Advances the world by `duration` (bounded: a millisecond a step), feeding every peer.
    static func run(_ world: VirtualRelayWorld, _ peers: [MachinePeer], for duration: Int64) {
        for _ in 0..<Int(duration / ms) {
            world.advance(by: ms)
            for peer in peers { peer.pump() }
        }
    }

    /// Peers named `names` with the given completion delays, each having reported the film,
    /// the first having chosen it, settled.
    static func group(_ world: VirtualRelayWorld, _ delays: [Int64?]) throws -> [MachinePeer] {
        var peers: [MachinePeer] = []
        for (index, delay) in delays.enumerated() {
            peers.append(MachinePeer(try world.join("peer \(index)"), world: world, completionDelay: delay))
        }
        for peer in peers { try peer.request(.report(item: "film", identity: identity, ready: true)) }
        run(world, peers, for: 100 * ms)
        try peers[0].request(.transition(item: "film", at: .zero))
        run(world, peers, for: 300 * ms)
        return peers
    }

    /// The ordered records the first peer received, decoded.
    static func records(_ peer: MachinePeer) -> [OrderedProposal] {
        (peer.participant.welcome.orderedHistory + peer.participant.ordered).compactMap {
            if case .proposal(let proposal) = MachinePeer.input($0) { proposal } else { nil }
        }
    }

    @Test func aPlayWaitsForTheSlowestPrerollAndEveryoneStartsAtOneInstant() throws {
        let world = VirtualRelayWorld()
        defer { world.shutdown() }
        let peers = try Self.group(world, [20 * Self.ms, 20 * Self.ms, 300 * Self.ms])
        try peers[0].request(.rate(1, []))
        Self.run(world, peers, for: 1_500 * Self.ms)
        let records = Self.records(peers[0])
        let play = try #require(records.last { if case .setRate = $0.proposal { true } else { false } })
        let slowest = try #require(records.last { $0.originator == peers[2].id && $0.proposal == .prerolled(version: play.order) })
        for peer in peers {
            #expect(peer.core == peers[0].core)
            // Everyone plays at the slow one's report, well before the deadline.
            #expect(peer.startingPlay?.hostTime.nanoseconds == slowest.effectiveAt.nanoseconds)
            #expect(peer.playsFollowTheTimeline)
        }
        #expect(slowest.effectiveAt > play.effectiveAt + TimeSpan.milliseconds(300))
        #expect(slowest.effectiveAt < play.orderedAt + PrerollGate.defaultWaitLimit)
        #expect(peers[0].core.timeline.anchorSessionTime == slowest.effectiveAt)
    }

    @Test func aParticipantThatNeverPrerollsIsWaitedForOneSecondThenCatchesUpAlone() throws {
        let world = VirtualRelayWorld()
        defer { world.shutdown() }
        let peers = try Self.group(world, [20 * Self.ms, 20 * Self.ms, 20 * Self.ms])
        peers[2].completionDelay = nil
        try peers[0].request(.rate(1, []))
        Self.run(world, peers, for: 1_800 * Self.ms)
        let play = try #require(Self.records(peers[0]).last { if case .setRate = $0.proposal { true } else { false } })
        let deadline = play.orderedAt + PrerollGate.defaultWaitLimit
        for peer in peers {
            #expect(peer.core == peers[0].core)
            #expect(peer.core.timeline.anchorSessionTime == deadline)
        }
        #expect(peers[0].startingPlay?.hostTime.nanoseconds == deadline.nanoseconds)
        #expect(peers.allSatisfy { $0.playsFollowTheTimeline })
        // The slow one's seek was abandoned at the deadline and the play went out behind it, on
        // the group's timeline.
        #expect(peers[2].events.contains { if case .commandAbandoned(.seek) = $0 { true } else { false } })
        let caughtUp = try #require(peers[2].lastPlay)
        #expect(caughtUp.itemTime == peers[2].core.timeline.mediaTime(atSessionTime: SessionInstant(nanoseconds: caughtUp.hostTime.nanoseconds)))
    }

    @Test func aParticipantLeavingDuringTheGateIsNoLongerWaitedFor() throws {
        let world = VirtualRelayWorld()
        defer { world.shutdown() }
        let peers = try Self.group(world, [20 * Self.ms, 20 * Self.ms, nil])
        try peers[0].request(.rate(1, []))
        Self.run(world, peers, for: 200 * Self.ms)
        #expect(world.leave(peers[2].participant))
        let remaining = Array(peers.prefix(2))
        Self.run(world, remaining, for: 1_500 * Self.ms)
        let records = Self.records(peers[0])
        let play = try #require(records.last { if case .setRate = $0.proposal { true } else { false } })
        let departed = try #require(records.last { $0.proposal == .departed(peers[2].id) })
        #expect(remaining[0].core == remaining[1].core)
        #expect(remaining[0].core.timeline.anchorSessionTime == departed.effectiveAt)
        #expect(departed.effectiveAt < play.orderedAt + PrerollGate.defaultWaitLimit)
        #expect(remaining.allSatisfy { $0.startingPlay?.hostTime.nanoseconds == departed.effectiveAt.nanoseconds })
        #expect(remaining.allSatisfy { $0.playsFollowTheTimeline })
    }

    @Test func aGroupOfOnePlaysAtOnce() throws {
        let world = VirtualRelayWorld()
        defer { world.shutdown() }
        let peers = try Self.group(world, [20 * Self.ms])
        try peers[0].request(.rate(1, []))
        Self.run(world, peers, for: 200 * Self.ms)
        let play = try #require(Self.records(peers[0]).last { if case .setRate = $0.proposal { true } else { false } })
        #expect(peers[0].core.waiting.gate == nil)
        #expect(peers[0].lastPlay?.hostTime.nanoseconds == play.effectiveAt.nanoseconds)
        #expect(!peers[0].commands.suffix(2).contains { if case .seek = $0 { true } else { false } })
    }

    @Test func aStallStormStopsHoldingTheGroupAfterThreeAMinute() throws {
        let world = VirtualRelayWorld()
        defer { world.shutdown() }
        let peers = try Self.group(world, [20 * Self.ms, 20 * Self.ms])
        try peers[0].request(.rate(1, [.playImmediately]))
        Self.run(world, peers, for: 200 * Self.ms)
        var waited: [Bool] = []
        for _ in 0..<5 {
            let stall = UUID()
            peers[1].beginSuspension(stall, .stallRecovery)
            Self.run(world, peers, for: 100 * Self.ms)
            waited.append(peers[0].core.isWaiting)
            peers[1].endSuspension(stall)
            Self.run(world, peers, for: 100 * Self.ms)
        }
        #expect(waited == [true, true, true, false, false])
        #expect(peers[0].core == peers[1].core)
    }

    @Test func aLateJoinerHoldsTheSameCoreAfterTheGateAndBadProposals() throws {
        let world = VirtualRelayWorld()
        defer { world.shutdown() }
        let peers = try Self.group(world, [20 * Self.ms, 80 * Self.ms])
        try peers[0].request(.rate(1, []))
        Self.run(world, peers, for: 300 * Self.ms)
        // Bad proposals, straight on the link: unreadable bytes, a rate out of range, a report
        // for a play that never was.
        try peers[1].participant.link.sendOrdered(Array("not a proposal".utf8))
        try peers[1].participant.link.sendOrdered(Array(try JSONEncoder().encode(PlaybackProposal.setRate(9))))
        try peers[1].participant.link.sendOrdered(Array(try JSONEncoder().encode(PlaybackProposal.prerolled(version: 999))))
        Self.run(world, peers, for: 300 * Self.ms)
        let late = MachinePeer(try world.join("late"), world: world)
        let all = peers + [late]
        Self.run(world, all, for: 100 * Self.ms)
        #expect(late.core == peers[0].core)
        #expect(peers[1].core == peers[0].core)
        #expect(peers[0].events.contains { if case .proposalRejected(let rejection, _, _) = $0 { rejection.reason == .rateOutOfRange } else { false } })
        #expect(peers[0].core.timeline.rate == 1)
        // The late joiner comes in on the group's timeline.
        let play = try #require(late.lastPlay)
        #expect(play.itemTime == late.core.timeline.mediaTime(atSessionTime: SessionInstant(nanoseconds: play.hostTime.nanoseconds)))
    }

    @Test func aParticipantWithAnotherFileIsSuspendedWithoutHoldingTheGroupAndTheOthersPlayOn() throws {
        let world = VirtualRelayWorld()
        defer { world.shutdown() }
        let peers = try Self.group(world, [20 * Self.ms, 20 * Self.ms, 20 * Self.ms])
        let cleo = peers[2]
        // Cleo's file differs from the group's (the first identity reported for the item).
        try cleo.request(.report(item: "film", identity: "d=61.000;h=bb", ready: true))
        Self.run(world, peers, for: 100 * Self.ms)
        for peer in peers {
            #expect(peer.core.isMismatched(cleo.id))
            #expect(peer.events.contains { if case .itemMismatch = $0 { true } else { false } })
        }
        let suspension = try #require(cleo.core.suspensions.first { $0.participant == cleo.id })
        #expect(suspension.reason == .coordinatedPlaybackNotPossible)
        #expect(!suspension.holdsGroup)
        #expect(!peers[0].core.isWaiting)
        // The others play, without waiting for Cleo's pre-roll; Cleo's player is driven by nothing.
        let cleoBefore = cleo.commands.count
        try peers[0].request(.rate(1, []))
        Self.run(world, peers, for: 300 * Self.ms)
        #expect(peers[0].core.timeline.rate == 1)
        #expect(peers[0].core.waiting.gate == nil)
        #expect(cleo.commands.count == cleoBefore)
        let play = try #require(Self.records(peers[0]).last { if case .setRate = $0.proposal { true } else { false } })
        #expect(peers[0].core.timeline.anchorSessionTime < play.orderedAt + PrerollGate.defaultWaitLimit)
        // Cleo loads the group's file: the suspension ends, and Cleo comes in on the timeline.
        try cleo.request(.report(item: "film", identity: Self.identity, ready: true))
        Self.run(world, peers, for: 500 * Self.ms)
        #expect(!cleo.core.isMismatched(cleo.id))
        #expect(cleo.core.suspensions.isEmpty)
        #expect(cleo.machine.mismatchSuspension == nil)
        #expect(cleo.commands.count > cleoBefore)
        #expect(cleo.playsFollowTheTimeline)
        #expect(peers.allSatisfy { $0.core == peers[0].core })
    }

    @Test func theLoopSchedulerRunsWorkAtItsInstantsInVirtualTimeAndCancels() throws {
        let world = VirtualRelayWorld()
        defer { world.shutdown() }
        let ana = try world.join("ana", clockOffset: 5_000 * Self.ms)
        let scheduler = LoopCoordinatorScheduler(loop: ana.loop)
        let start = scheduler.now
        let ran = Mutex<[String]>([])
        _ = scheduler.schedule(at: start + .milliseconds(20)) { ran.withLock { $0.append("20 ms at \(scheduler.now - start)") } }
        let cancelled = scheduler.schedule(at: start + .milliseconds(10)) { ran.withLock { $0.append("cancelled") } }
        scheduler.execute { ran.withLock { $0.append("at once") } }
        cancelled.cancel()
        world.run()
        #expect(ran.withLock { $0 } == ["at once"])
        world.advance(by: 19 * Self.ms)
        #expect(ran.withLock { $0 } == ["at once"])
        world.advance(by: 1 * Self.ms)
        #expect(ran.withLock { $0 } == ["at once", "20 ms at \(TimeSpan.milliseconds(20))"])
    }

    @Test func theWaitingStateSurvivesEncoding() throws {
        let world = VirtualRelayWorld()
        defer { world.shutdown() }
        let peers = try Self.group(world, [20 * Self.ms, nil])
        try peers[0].request(.rate(1, []))
        Self.run(world, peers, for: 100 * Self.ms)
        let waiting = peers[0].core.waiting
        #expect(waiting.gate != nil)
        #expect(try JSONDecoder().decode(CoordinationCore.Waiting.self, from: JSONEncoder().encode(waiting)) == waiting)
    }
}
