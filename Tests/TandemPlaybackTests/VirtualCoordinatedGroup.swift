import Foundation
import Synchronization
import Tandem
import TandemClock
import TandemNet
import TandemTestKit
@testable import TandemPlayback
import TandemHarness

/// The session clock as a world participant knows it, exactly: the world's loop clock is the
/// session clock, and the participant's clock is off it by the offset and drift it joined with.
struct WorldSessionClock: SessionClockSource {
    let clock: SkewedClock<VirtualClock>
    func sessionTime(atLocal localTime: Int64) -> Int64? { clock.baseTime(atLocal: localTime) }
    func localTime(atSession sessionTime: Int64) -> Int64? { clock.localTime(atBase: sessionTime) }
    func errorBound(atLocal localTime: Int64) -> Int64? { 0 }
    func stop() {}
}

/// A world participant's local clock, which is its host (monotonic) clock too.
struct WorldLocalClock: MonotonicDerivedClock {
    let clock: SkewedClock<VirtualClock>
    func now() -> Int64 { clock.instant().nanoseconds }
    func monotonicTime(atLocal localTime: Int64) -> Int64 { localTime }
    func localTime(atMonotonic monotonicTime: Int64) -> Int64 { monotonicTime }
}

/// A `CoordinationChannel` over a `VirtualRelayWorld` participant's link, fed as a session feeds
/// the coordinator: the welcome's history, `.endOfHistory`, then each record as the link emits
/// it, on the loop, straight into `PlaybackCoordinator.receive` (no task), and each departure
/// the link reports into `PlaybackCoordinator.depart`. Its executor is the participant's view of
/// the world's loop, as a session's is its participant's loop: a coordinator given no scheduler
/// runs there, through the same adapter (`LoopScheduler`) as over a session.
final class LinkChannel: CoordinationChannel, @unchecked Sendable {
    let participant: VirtualRelayWorld.Participant
    /// The loop the coordinator runs on: the participant's, unless a test gives another view of it.
    let loop: any SerialEventLoop
    /// The channel's calls the coordinator made to check and send a request, each with whether it
    /// came on the participant's loop.
    let calls = Mutex<[Call]>([])
    /// What the session's policy refuses, when a test sets it.
    let refusal = Mutex<ProposalRejection?>(nil)

    /// A call of the channel's, as `calls` keeps it.
    struct Call: Equatable {
        enum Kind: Equatable { case policy, propose }
        let kind: Kind
        let onLoop: Bool
    }

    init(_ participant: VirtualRelayWorld.Participant, loop: (any SerialEventLoop)? = nil) {
        self.participant = participant
        self.loop = loop ?? participant.loop
    }

    func propose(_ proposal: PlaybackProposal) throws {
        calls.withLock { $0.append(Call(kind: .propose, onLoop: participant.loop.inLoop)) }
        try participant.link.sendOrdered(Array(try JSONEncoder().encode(proposal)), retention: .playback)
    }

    func policyRejection(of proposal: PlaybackProposal) -> ProposalRejection? {
        calls.withLock { $0.append(Call(kind: .policy, onLoop: participant.loop.inLoop)) }
        return refusal.withLock { $0 }
    }

    func publish(_ snapshot: CoordinationSnapshot) throws {
        try participant.link.sendOrdered(try snapshot.encoded(), retention: .snapshot(reflecting: snapshot.reflecting))
    }

    func deliverOrdered(while wanted: @escaping @Sendable () -> Bool, to receive: @escaping @Sendable (OrderedInput) -> Void) {
        for delivery in participant.welcome.orderedHistory + participant.ordered where wanted() { receive(OrderedInput(delivery)) }
        if wanted() { receive(.endOfHistory) }
        participant.observe { event in
            if case .ordered(let delivery) = event, wanted() { receive(OrderedInput(delivery)) }
        }
    }

    var marksEndOfHistory: Bool { true }
    var localParticipant: UUID { participant.id }
    func deliverDepartures(while wanted: @escaping @Sendable () -> Bool, to depart: @escaping @Sendable (UUID) -> Void) {
        participant.observe { event in
            if case .participantLeft(let id) = event, wanted() { depart(id) }
        }
    }

    var executor: (any CoordinatorExecutor)? { LoopScheduler(loop: loop) }
    var clock: (any SessionClockSource)? { WorldSessionClock(clock: participant.clock) }
    var localClock: any MonotonicDerivedClock { WorldLocalClock(clock: participant.clock) }
}

/// A player as the coordinator sees it through the delegate protocol: it keeps every command
/// with the host instant it was issued at and completes it `completionDelay` later on the
/// coordinator's scheduler (nil: never), and it has the items it was given. Given the loop the
/// coordinator should run on, it counts the commands issued anywhere else.
final class ScriptedPlayer: PlaybackCoordinatorDelegate, @unchecked Sendable {
    struct State {
        var item: String?
        var identity: String?
        var issued: [(at: HostInstant, command: PlaybackCommand)] = []
    }

    let scheduler: any CoordinatorScheduler
    let completionDelay: TimeSpan?
    /// The loop commands should come on, if the test checks it.
    let loop: (any SerialEventLoop)?
    private let state: Mutex<State>
    private let offLoop = Atomic<Int>(0)

    init(item: String?, identity: String?, scheduler: any CoordinatorScheduler, completionDelay: TimeSpan? = .milliseconds(20),
         loop: (any SerialEventLoop)? = nil) {
        self.scheduler = scheduler
        self.completionDelay = completionDelay
        self.loop = loop
        state = Mutex(State(item: item, identity: identity))
    }

    /// How many commands were issued off `loop`.
    var commandsOffLoop: Int { offLoop.load(ordering: .relaxed) }

    var currentItemIdentifier: String? { state.withLock { $0.item } }
    var currentItemIdentity: String? { state.withLock { $0.identity } }

    func playbackCoordinator(_ coordinator: PlaybackCoordinator, didIssue command: PlaybackCommand,
                             completion: @escaping @Sendable () -> Void) {
        let now = scheduler.now
        if let loop, !loop.inLoop { offLoop.add(1, ordering: .relaxed) }
        state.withLock { $0.issued.append((now, command)) }
        guard let completionDelay else { return }
        _ = scheduler.schedule(at: now + completionDelay, completion)
    }

    /// Every command so far, oldest first.
    var commands: [PlaybackCommand] { state.withLock { $0.issued.map(\.command) } }
    /// The play commands so far.
    var plays: [PlayCommand] { commands.compactMap { if case .play(let play) = $0 { play } else { nil } } }
    /// The last play or pause command.
    var lastTransport: PlaybackCommand? {
        commands.last { switch $0 { case .play, .pause: true; default: false } }
    }
}

/// A coordinator's events, taken on the loop as they happen.
final class EventLog: Sendable {
    let events = Mutex<[CoordinationCore.Event]>([])
}

/// Participants of a `VirtualRelayWorld`, each a real `PlaybackCoordinator` shell given no
/// scheduler over a `LinkChannel`, so running on the participant's view of the world's loop as a
/// session's coordinator runs on its participant's loop, driving a `ScriptedPlayer`: the
/// coordinator's behaviour through a relay, end to end above the link, with no thread, sleep or
/// poll; time moves only in `run(for:)`.
final class VirtualCoordinatedGroup: @unchecked Sendable {
    struct Member {
        let participant: VirtualRelayWorld.Participant
        let scheduler: LoopCoordinatorScheduler
        let coordinator: PlaybackCoordinator
        let player: ScriptedPlayer
        /// Every event the coordinator reported, as it reported it on the loop.
        let log: EventLog
        var id: UUID { participant.id }
        /// The events so far, oldest first.
        var events: [CoordinationCore.Event] { log.events.withLock { $0 } }
        /// The session instant at host instant `host` of this member.
        func sessionTime(atHost host: HostInstant) -> SessionInstant {
            SessionInstant(nanoseconds: participant.clock.baseTime(atLocal: host.nanoseconds))
        }
    }

    static let ms: Int64 = 1_000_000
    let world: VirtualRelayWorld
    private(set) var members: [Member] = []

    init(world: VirtualRelayWorld = VirtualRelayWorld()) { self.world = world }

    /// Joins a member whose clock is off the session clock by `clockOffset` (ns) and `driftPPM`,
    /// with a player on `item` (identity `identity`), coordinating as
    /// `coordinateWithSession(_:)` does (the player's item reported).
    @discardableResult
    func join(_ name: String, item: String? = "film", identity: String? = "d=60.000;h=aa", clockOffset: Int64 = 0,
              driftPPM: Double = 0, waitsForPreroll: Bool = true, completionDelay: TimeSpan? = .milliseconds(20)) throws -> Member {
        let participant = try world.join(name, clockOffset: clockOffset, driftPPM: driftPPM)
        let scheduler = LoopCoordinatorScheduler(loop: participant.loop)
        let player = ScriptedPlayer(item: item, identity: identity, scheduler: scheduler, completionDelay: completionDelay,
                                    loop: participant.loop)
        let coordinator = PlaybackCoordinator(delegate: player, waitsForPreroll: waitsForPreroll)
        let log = EventLog()
        coordinator.observeEvents { event in log.events.withLock { $0.append(event) } }
        coordinator.coordinate(over: LinkChannel(participant))
        coordinator.reportDelegateItem()
        let member = Member(participant: participant, scheduler: scheduler, coordinator: coordinator, player: player, log: log)
        members.append(member)
        return member
    }

    /// Moves virtual time on by `milliseconds`, a millisecond at a time, running all that falls due.
    func run(for milliseconds: Int) {
        for _ in 0..<milliseconds { world.advance(by: Self.ms) }
    }

    /// Stops the relay.
    func shutdown() { world.shutdown() }
}

/// A participant of `VirtualSessions` whose `PlaybackCoordinator` coordinates with its session
/// (`coordinateWithSession`, so on the session's loop, through `SessionChannel`), driving a
/// `ScriptedPlayer`, its events logged as they happen: a whole participant in virtual time.
struct SessionParticipant {
    let member: VirtualSessions<WatchTogether>.Member
    let coordinator: PlaybackCoordinator
    let player: ScriptedPlayer
    let log: EventLog
    var session: GroupSession<WatchTogether> { member.session }
    /// The coordinator's events so far, oldest first.
    var events: [CoordinationCore.Event] { log.events.withLock { $0 } }
    /// The reasons of the proposals the coordinator rejected so far, in order.
    var rejections: [ProposalRejection.Reason] {
        events.compactMap { if case .proposalRejected(let rejection, _, _) = $0 { rejection.reason } else { nil } }
    }

    /// `member` with a coordinator coordinating with its session and a player on `item`.
    init(_ member: VirtualSessions<WatchTogether>.Member, item: String? = "film", identity: String? = "d=60.000;h=aa",
         waitsForPreroll: Bool = true) {
        self.member = member
        player = ScriptedPlayer(item: item, identity: identity, scheduler: LoopCoordinatorScheduler(loop: member.participant.loop),
                                loop: member.participant.loop)
        coordinator = PlaybackCoordinator(delegate: player, waitsForPreroll: waitsForPreroll)
        let log = EventLog()
        coordinator.observeEvents { event in log.events.withLock { $0.append(event) } }
        self.log = log
        coordinator.coordinateWithSession(member.session)
    }
}
