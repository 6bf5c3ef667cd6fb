import Foundation
import Synchronization
import Tandem
import TandemClock

/// Several players in one process coordinated with each other without a session, as
/// AVFoundation's `AVPlaybackCoordinationMedium`: a multi-view, a wall of screens.
///
/// A player joins with `try player.playbackCoordinator.coordinate(using: medium)` and leaves with
/// `coordinate(using: nil)` (or by joining another medium). From then on, a play, a pause, a seek
/// or a rate change made on any connected player (its own transport, or its coordinator's
/// `coordinateRateChange(to:options:)` and `coordinateSeek(to:options:)`) reaches every connected
/// player at one instant, and the players wait for each other's readiness and suspensions as a
/// session's participants do: each connected coordinator is a participant of its own, with its
/// policies (`suspensionReasonsThatTriggerWaiting`, the pre-roll gate) as over a session.
///
/// The medium is the relay and the session clock in one, in process: it orders every connected
/// coordinator's proposals and snapshots, hands each record to every connected coordinator in that
/// one order (a coordinator that connects late is handed the history first, from the last
/// snapshot on, so that it comes in where the others are), stamps each with its instant on the
/// medium's clock and an effective instant `lead` later, and tells the others when a coordinator
/// disconnects. Its clock is every connected coordinator's session clock and local clock alike, so
/// that the effective instants are exact (no estimate, no offset) and nothing travels over a
/// socket.
///
/// With no session there is no session's event loop: the coordinators connected to a medium run
/// on the medium's one serial dispatch queue (those given a `CoordinatorScheduler` of their own
/// run on it instead), and their delegates are called there.
public final class PlaybackCoordinationMedium: Sendable {
    /// How far after its ordering a change takes effect by default: what a relay on the loopback
    /// gives (its smallest lead), so that a medium's players change as a session's would.
    public static let defaultLead = TimeSpan.milliseconds(30)

    /// How far after its ordering each change takes effect: the time every connected coordinator
    /// has to issue its player the command.
    public let lead: TimeSpan

    /// The medium's clock: the session clock and the local clock of every connected coordinator.
    public let clock: any MonotonicDerivedClock

    private let state = Mutex(State())

    /// The serial dispatch queue every coordinator connected to the medium runs on (unless it
    /// was given a scheduler of its own), on the host's raw monotonic clock: a medium has no
    /// session, so no session's event loop, and its coordinators share this one executor.
    let executor = QueueScheduler(label: "tandem.coordination-medium")

    /// A medium with no coordinator connected, on the host's monotonic clock, as AVFoundation's
    /// `init()`.
    public convenience init() {
        self.init(clock: SystemClock())
    }

    /// A medium on `clock` (a test's virtual clock; the system clock for players, whose
    /// presentation deadlines are on it), whose changes take effect `lead` after they are ordered.
    public init(clock: any MonotonicDerivedClock, lead: TimeSpan = PlaybackCoordinationMedium.defaultLead) {
        self.clock = clock
        self.lead = max(lead, .zero)
    }

    /// Every playback coordinator connected to the medium, in the order they connected, as
    /// AVFoundation's property.
    public var connectedPlaybackCoordinators: [PlaybackCoordinator] {
        // Read after the medium's lock is released: the medium takes nothing of a coordinator's
        // under its lock but the coordinator's view, briefly.
        let coordinators = state.withLock { state in state.members.compactMap(\.coordinator) }
        return coordinators.filter { $0.playbackCoordinationMedium === self }
    }

    // MARK: The sequencer

    private struct Member {
        let participant: UUID
        weak var coordinator: PlaybackCoordinator?
        /// Whether the coordinator still coordinates over this connection; nil until it asks for
        /// delivery.
        var wanted: (@Sendable () -> Bool)?
        var receive: (@Sendable (OrderedInput) -> Void)?
        /// Who to tell when another member departs (the coordinator's `depart`, hopping onto
        /// the medium's queue).
        var departures: [@Sendable (UUID) -> Void] = []

        var isGone: Bool { coordinator == nil || wanted?() == false }
    }

    private struct State {
        var nextOrder: UInt64 = 1
        var lastEffectiveAt: Int64 = .min
        /// What a coordinator connecting now is handed: the last snapshot and the proposals
        /// ordered after what it reflects.
        var history: [OrderedInput] = []
        var members: [Member] = []
    }

    /// Connects `participant`, a connection of `coordinator`: from now on the medium counts it
    /// present, and the records it orders are kept for it until it asks for them.
    func connect(_ participant: UUID, coordinator: PlaybackCoordinator) {
        state.withLock { $0.members.append(Member(participant: participant, coordinator: coordinator)) }
    }

    /// Disconnects `participant`: it is handed nothing more, and every other connected
    /// coordinator is told it departed.
    func disconnect(_ participant: UUID) {
        let (gone, told) = state.withLock { state -> ([Member], [@Sendable (UUID) -> Void]) in
            let gone = state.members.filter { $0.participant == participant }
            state.members.removeAll { $0.participant == participant }
            return (gone, state.members.flatMap(\.departures))
        }
        announce(gone, to: told)
    }

    /// Tells `told` that every member of `gone` departed.
    private func announce(_ gone: [Member], to told: [@Sendable (UUID) -> Void]) {
        for member in gone {
            for depart in told { depart(member.participant) }
        }
    }

    /// Members whose coordinator is gone or coordinates over something else now: taken out, to be
    /// announced (under the lock; the caller announces them after it).
    private static func prune(_ state: inout State) -> [Member] {
        let gone = state.members.filter(\.isGone)
        if !gone.isEmpty { state.members.removeAll(where: \.isGone) }
        return gone
    }

    /// Hands `participant` the history, `.endOfHistory`, then each record as it is ordered. The
    /// history and the registration happen under one lock, so that no record falls between them.
    ///
    /// Records are handed over under the medium's lock, which keeps the one order for everyone:
    /// `receive` reads the coordinator's current run under its view's lock and hops onto the
    /// medium's queue, which only enqueues, and `wanted` reads an atomic. A coordinator never
    /// holds its view's lock while it takes the medium's (it reads `present` in a step, with no
    /// lock held), so the two locks are always taken in this order.
    func deliver(to participant: UUID, while wanted: @escaping @Sendable () -> Bool,
                 _ receive: @escaping @Sendable (OrderedInput) -> Void) {
        state.withLock { state in
            guard let index = state.members.firstIndex(where: { $0.participant == participant }) else { return }
            for record in state.history where wanted() { receive(record) }
            if wanted() { receive(.endOfHistory) }
            state.members[index].wanted = wanted
            state.members[index].receive = receive
        }
    }

    /// Tells `depart` of the participants who depart while `participant` is connected (after
    /// the medium's lock is released).
    func deliverDepartures(to participant: UUID, _ depart: @escaping @Sendable (UUID) -> Void) {
        state.withLock { state in
            guard let index = state.members.firstIndex(where: { $0.participant == participant }) else { return }
            state.members[index].departures.append(depart)
        }
    }

    /// The participants connected now.
    var present: Set<UUID> {
        state.withLock { state in Set(state.members.filter { !$0.isGone }.map(\.participant)) }
    }

    /// Orders a proposal of `participant`'s.
    func order(_ proposal: PlaybackProposal, from participant: UUID) throws {
        try order(from: participant) { order, orderedAt, effectiveAt in
            .proposal(OrderedProposal(originator: participant, order: order, orderedAt: orderedAt, effectiveAt: effectiveAt,
                                      proposal: proposal))
        }
    }

    /// Orders a snapshot of `participant`'s: from it on, a coordinator that connects is handed it
    /// and the proposals after what it reflects, not those it covers.
    func order(_ snapshot: CoordinationSnapshot, from participant: UUID) throws {
        let body = try snapshot.encoded()
        if let rejection = snapshot.sizeRejection(ofBody: body.count) { throw SnapshotTooLarge(rejection: rejection) }
        try order(from: participant) { order, orderedAt, _ in
            .snapshot(SnapshotRecord(originator: participant, order: order, orderedAt: orderedAt, reflecting: snapshot.reflecting,
                                     body: body))
        }
    }

    /// Gives a record of `participant`'s the next order number, the medium's present instant and
    /// its effective instant (never before the last one's), keeps it for late connections and
    /// hands it to every connected coordinator.
    private func order(from participant: UUID,
                       _ record: (UInt64, SessionInstant, SessionInstant) throws -> OrderedInput) throws {
        let now = clock.instant().nanoseconds
        let (gone, told) = try state.withLock { state -> ([Member], [@Sendable (UUID) -> Void]) in
            let gone = Self.prune(&state)
            guard state.members.contains(where: { $0.participant == participant }) else {
                throw CoordinatorError("the coordinator is not connected to this coordination medium")
            }
            let effectiveAt = max(now.saturatingAdding(lead.nanoseconds), state.lastEffectiveAt)
            let input = try record(state.nextOrder, SessionInstant(nanoseconds: now), SessionInstant(nanoseconds: effectiveAt))
            if case .snapshot(let snapshot) = input {
                guard snapshot.reflecting < state.nextOrder else {
                    throw CoordinatorError("a snapshot at order \(state.nextOrder) cannot reflect order \(snapshot.reflecting)")
                }
                state.history.removeAll { Self.order(of: $0) <= snapshot.reflecting || Self.isSnapshot($0) }
            }
            state.nextOrder += 1
            state.lastEffectiveAt = effectiveAt
            state.history.append(input)
            for member in state.members {
                guard let receive = member.receive, member.wanted?() == true else { continue }
                receive(input)
            }
            return (gone, state.members.flatMap(\.departures))
        }
        announce(gone, to: told)
    }

    private static func order(of input: OrderedInput) -> UInt64 {
        switch input {
        case .proposal(let proposal): proposal.order
        case .snapshot(let snapshot): snapshot.order
        case .unreadable(_, let order, _), .other(_, let order), .placeholder(_, let order): order
        case .endOfHistory: .max
        }
    }

    private static func isSnapshot(_ input: OrderedInput) -> Bool {
        if case .snapshot = input { true } else { false }
    }

    /// How many records a coordinator connecting now would be handed (for tests and programs to
    /// see that snapshots keep the history short).
    var historyCount: Int { state.withLock { $0.history.count } }
}

/// A coordinator's connection to a medium, as a coordination channel.
struct MediumChannel: CoordinationChannel {
    let medium: PlaybackCoordinationMedium
    let localParticipant: UUID

    func propose(_ proposal: PlaybackProposal) throws { try medium.order(proposal, from: localParticipant) }
    func publish(_ snapshot: CoordinationSnapshot) throws { try medium.order(snapshot, from: localParticipant) }

    func deliverOrdered(while wanted: @escaping @Sendable () -> Bool, to receive: @escaping @Sendable (OrderedInput) -> Void) {
        medium.deliver(to: localParticipant, while: wanted, receive)
    }

    var marksEndOfHistory: Bool { true }
    var presentParticipants: Set<UUID>? { medium.present.union([localParticipant]) }
    func deliverDepartures(while wanted: @escaping @Sendable () -> Bool, to depart: @escaping @Sendable (UUID) -> Void) {
        medium.deliverDepartures(to: localParticipant) { participant in
            if wanted() { depart(participant) }
        }
    }
    /// The medium's queue: a medium has no loop of a session.
    var executor: (any CoordinatorExecutor)? { medium.executor }
    var clock: (any SessionClockSource)? { MediumClock() }
    var localClock: any MonotonicDerivedClock { medium.clock }
}

/// The session clock of a medium's coordinators: the medium's clock itself, which is their local
/// clock too, so every instant maps to itself, exactly.
struct MediumClock: SessionClockSource {
    func sessionTime(atLocal local: LocalInstant) -> SessionInstant? { SessionInstant(nanoseconds: local.nanoseconds) }
    func localTime(atSession session: SessionInstant) -> LocalInstant? { LocalInstant(nanoseconds: session.nanoseconds) }
    func errorBound(atLocal local: LocalInstant) -> TimeSpan? { .zero }
    func stop() {}
}
