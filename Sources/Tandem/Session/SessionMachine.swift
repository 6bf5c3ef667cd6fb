import Foundation
import TandemClock
import TandemNet
import TandemWire

/// The route streamed media bodies are delivered on (`GroupSession.streamBodies()`): not a Swift
/// type's name, and never delivered to a messenger (a `.message` body on it is dropped).
let sessionStreamRoute = "\u{1}tandem.media-stream"

/// The decisions a participant's `GroupSession` makes, as a value: who is in the session, who is
/// away, who left, what the journal holds, which ordered records go to the coordinator and in
/// what order, what reaches the messengers and the chat, which activity is shown, whether the
/// relay can order anything, and when the session is over for this participant.
///
/// Each input comes with the participant's current local instant, and each `on…` method answers
/// with directives declared beside it (send this presence, publish this set, hand this record to
/// the coordinator, invalidate): the machine never reads a clock, does no I/O and starts no work,
/// in the manner of `RelayLinkCore` and `CoordinatorMachine`. `GroupSession` is its shell.
///
/// What arrives is opened and checked here with the session's `BodySealer` (the seal, the
/// signature, the path and kind, the sender, the replay window): a body that fails is counted and
/// reported (`EventDirective.reject`), and an ordered one becomes a placeholder that holds its
/// order, so that every participant's history counts every order.
struct SessionMachine<Activity: GroupActivity>: Sendable {
    /// Where the session stands for this participant.
    enum Phase: Sendable, Equatable {
        /// Not asked to join yet.
        case waiting
        /// Asked to join: connecting, or announcing itself once connected.
        case joining
        /// Joined: announced to the others, messages flow.
        case joined
        /// Over for this participant (`invalidation` says why).
        case invalidated
    }

    /// An attachment of the journal as the machine keeps it: its opened metadata. The shell adds
    /// the way to load its bytes.
    struct JournalEntry: Sendable, Equatable {
        var id: UUID
        var name: String
        var size: Int
        var owner: UUID
        var contentType: UTType
        var metadata: Data?
    }

    /// This participant.
    let localParticipant: Participant
    /// Whether this participant started the session (rather than accepting an invite).
    let isLocallyInitiated: Bool
    /// Opens and checks what arrives; its replay windows are the machine's memory of counters.
    let bodies: BodySealer

    // The state below is changed by the machine's own methods alone (in this file and in
    // `SessionMachine+Events.swift`); the shell only reads it.
    var phase = Phase.waiting
    /// Why the session is over, once it is.
    var invalidation: GroupSessionError?
    /// Whether a link to the relay is held (accepted with one, or connected since).
    var hasLink = false
    /// Everyone the relay says is connected, by identity.
    var known: [UUID: Participant] = [:]
    /// Those who left but may have signed records this participant receives, by identity.
    var former: [UUID: Participant] = [:]
    /// Those who announced themselves in the activity (this participant too, once joined).
    var active: Set<UUID> = []
    /// Those the relay reported away and not back, by identity.
    var away: Set<UUID> = []
    /// When each of `away` was reported away.
    var awaySince: [UUID: LocalInstant] = [:]
    /// Ordered records not yet taken by the coordinator (the history first), placeholders included.
    var orderedBacklog: [OrderedRecord] = []
    /// Whether the coordinator reads the ordered records (`onOrderedReader`): then they are
    /// handed on as they come and none is kept.
    var hasOrderedReader = false
    /// The last order taken: an order at or below it is a duplicate.
    var lastOrder: UInt64?
    /// The hash chain over the session's order, to compare with other participants' heads.
    var chain = OrderedChain()
    /// How far the relay's ordering instants may run ahead of this participant's own clock.
    var sessionTimeBound = SessionTimeBound()
    /// The journal, in the order its attachments were added.
    var journal: [JournalEntry] = []
    /// This participant's activity changes sent but not yet back in the group's order.
    var pendingActivityChanges = 0
    /// The newest chat lines, at most `ChatMessage.keptCount`, oldest first.
    var chat: [ChatMessage] = []
    /// Bodies dropped on arrival, by reason.
    var rejected: [RejectionReason: Int] = [:]
    /// Whether the relay can order the session's changes now.
    var relayAvailability = RelayAvailability.available
    /// The activity's `lifetimePolicy`, as read when this participant joined.
    var lifetimePolicy = GroupActivityMetadata.LifetimePolicy.automatic
    /// Who started the session: this participant, or the signer of the activity the relay
    /// welcomed it with (nil when that could not be read).
    var initiator: UUID?
    /// When this participant announced itself.
    var joinedAt: LocalInstant?
    /// When the link last resumed after an interruption.
    var resumedAt: LocalInstant?
    /// The session's roles and policy, folded from the role records in order
    /// (`SessionMachine+Roles.swift`).
    var roleBook: RoleBook
    /// The order of each signer's first ordered record, as this participant saw it or the
    /// relay's welcome said: who has been present longest.
    var seniority: [UUID: UInt64] = [:]
    /// The roles this participant last sent a claim or a reinstatement for (once each).
    var answeredRoles: SessionRoles?
    /// Each self-certified participant's public key, by identity: a new epoch's secret is
    /// sealed to these (`EpochChange`).
    var keys: [UUID: [UInt8]] = [:]
    /// The counter of this participant's last statement for the relay (`recordBytes(for:)`).
    var authorityCounter: UInt64 = 0

    /// A machine for `localParticipant`, whose `bodies` holds its key for the session, in a
    /// session created by `creator` (its first operator; nil when the invite named none).
    init(localParticipant: Participant, bodies: BodySealer, isLocallyInitiated: Bool, creator: UUID? = nil) {
        self.localParticipant = localParticipant
        self.bodies = bodies
        self.isLocallyInitiated = isLocallyInitiated
        roleBook = RoleBook(creator: creator)
        initiator = isLocallyInitiated ? localParticipant.id : nil
    }

    /// Whether the session is over for this participant.
    var isInvalidated: Bool { phase == .invalidated }

    /// Whether this participant may send: joined, announced, not invalidated.
    var isJoined: Bool { phase == .joined && active.contains(localParticipant.id) }

    /// The active participants as people see them: those announced and known, this one included.
    var activeParticipants: Set<Participant> {
        Set(active.compactMap { known[$0] ?? ($0 == localParticipant.id ? localParticipant : nil) })
    }

    /// The away participants as people see them: those reported away that are known.
    var awayParticipants: Set<Participant> { Set(away.compactMap { known[$0] }) }

    /// The participant with identity `id`: this one, one in the session now, or one who has
    /// left but signed something this participant may receive; nil if never heard of.
    func participant(identifiedBy id: UUID) -> Participant? {
        id == localParticipant.id ? localParticipant : known[id] ?? former[id]
    }

    // MARK: Joining

    /// What to do when asked to join.
    enum JoinDirective: Sendable, Equatable {
        /// Read the activity's lifetime policy (`onLifetimePolicy(_:)`), then connect to the
        /// relay when `connect` (`onWelcome(_:at:)` or `onJoinFailed(_:)`), then announce this
        /// participant (`onAnnounce(at:)`).
        case prepare(connect: Bool)
    }

    /// The program asked to join: once, and not after the session is over.
    mutating func onJoinRequested(at now: LocalInstant) -> [JoinDirective] {
        guard phase == .waiting else { return [] }
        phase = .joining
        return [.prepare(connect: !hasLink)]
    }

    /// The activity's metadata says the session lives by `policy`.
    mutating func onLifetimePolicy(_ policy: GroupActivityMetadata.LifetimePolicy) {
        lifetimePolicy = policy
    }

    /// The link could not be had: the session is over with `reason`.
    mutating func onJoinFailed(_ reason: GroupSessionError) -> [EventDirective] {
        invalidate(reason)
    }

    /// What to do once connected and about to announce this participant.
    enum AnnounceDirective: Sendable, Equatable {
        /// Send this participant's signed presence to everyone.
        case sendPresence(to: Recipients)
        /// Publish who is active.
        case publishActive(Set<Participant>)
        /// The session is joined: `state` becomes `.joined`.
        case publishJoined
    }

    /// Announces this participant in the activity: it becomes active, and the session joined.
    /// Nothing when the session ended meanwhile, or no link was had.
    mutating func onAnnounce(at now: LocalInstant) -> [AnnounceDirective] {
        guard phase == .joining, hasLink else { return [] }
        phase = .joined
        active.insert(localParticipant.id)
        joinedAt = now
        return [.sendPresence(to: .everyone), .publishActive(activeParticipants), .publishJoined]
    }

    /// Takes over a joined link's welcome: who is there and who has been, the journal, and the
    /// ordered history so far (each record as `onRelayEvent(.ordered)` takes it, the seals opened
    /// together). For a joiner, the initiator is whoever signed the session's activity.
    mutating func onWelcome(_ welcome: RelayWelcome, at now: LocalInstant) -> [EventDirective] {
        guard !isInvalidated, !hasLink else { return [] }
        hasLink = true
        var out: [EventDirective] = []
        if !isLocallyInitiated { initiator = ActivityDescription.signer(of: welcome.activity, bodies: bodies) }
        for record in welcome.participants {
            guard let participant = verified(record, into: &out) else { continue }
            if record.departed { former[record.id] = participant } else { known[record.id] = participant }
        }
        for record in welcome.attachments { out += attachmentAdded(record) }
        // How long each has been present, where the history the relay kept no longer shows it.
        for (id, order) in welcome.firstOrders where known[id] != nil { seniority[id] = order }
        return out + onOrderedHistory(welcome.orderedHistory, at: now)
    }

    /// Takes a joiner's ordered history: the seals opened together (`BodySealer.open(_:)`, on
    /// every processor), then each record in order as `onRelayEvent(.ordered)` takes it.
    mutating func onOrderedHistory(_ history: [OrderedDelivery], at now: LocalInstant) -> [EventDirective] {
        guard !isInvalidated else { return [] }
        bodies.learnEpochs(from: history)
        let opened = bodies.open(history.map { ($0.body, Self.expectation(ordered: $0)) })
        var out: [EventDirective] = []
        for (delivery, body) in zip(history, opened) { out += ordered(delivery, opened: body) }
        return out
    }

    // MARK: Leaving

    /// What to do when this participant leaves or ends the session.
    enum DepartureDirective: Sendable, Equatable {
        /// The session is over here: finish every sequence, with this reason.
        case invalidate(GroupSessionError)
        /// Tell the relay this participant leaves.
        case leaveRelay
        /// Tell the relay the session ends for everyone, with this reason.
        case endRelay(reason: String)
    }

    /// The program leaves: the others go on, unless this participant started an activity that
    /// ends when its initiator leaves (as its metadata said when it joined), which then ends.
    mutating func onLeaveRequested(at now: LocalInstant) -> [DepartureDirective] {
        if isLocallyInitiated, lifetimePolicy == .endsWhenInitiatorLeaves {
            return onEndRequested(GroupSessionError(.ended, "\(localParticipant), who started it, left: the activity ends with them"), at: now)
        }
        guard !isInvalidated else { return [] }
        let link = hasLink
        return departure(GroupSessionError(.left, "\(localParticipant) left the session")) + (link ? [.leaveRelay] : [])
    }

    /// The program ends the session for everyone, with `reason`.
    mutating func onEndRequested(_ reason: GroupSessionError, at now: LocalInstant) -> [DepartureDirective] {
        guard !isInvalidated else { return [] }
        let link = hasLink
        return departure(reason) + (link ? [.endRelay(reason: reason.detail)] : [])
    }

    private mutating func departure(_ reason: GroupSessionError) -> [DepartureDirective] {
        invalidate(reason).map { _ in .invalidate(reason) }
    }

    // MARK: The program's side

    /// Whether an assignment of the activity proposes it to the group.
    enum ActivityProposal: Sendable, Equatable {
        /// The session is over: the assignment is taken and does nothing.
        case ignore
        /// Not joined: the assignment is this participant's alone (what the session starts with).
        case keepLocally
        /// Joined: send it for ordering and show it at once; `onActivityProposalFailed()` if it
        /// cannot be sent.
        case propose
    }

    /// The program assigned the activity.
    mutating func onActivityAssigned() -> ActivityProposal {
        if isInvalidated { return .ignore }
        guard isJoined else { return .keepLocally }
        pendingActivityChanges += 1
        return .propose
    }

    /// An activity change could not be sent: it will not come back in the group's order.
    mutating func onActivityProposalFailed() {
        pendingActivityChanges = max(0, pendingActivityChanges - 1)
    }

    /// The coordinator reads the ordered records from now on: the backlog is handed over (the
    /// history first) and no record is kept after it. Nil when the session is over.
    mutating func onOrderedReader() -> [OrderedRecord]? {
        guard !isInvalidated else { return nil }
        hasOrderedReader = true
        defer { orderedBacklog.removeAll() }
        return orderedBacklog
    }

    /// Ends the session here with `reason`: nothing more is decided, nothing kept for readers.
    mutating func invalidate(_ reason: GroupSessionError) -> [EventDirective] {
        guard !isInvalidated else { return [] }
        phase = .invalidated
        invalidation = reason
        orderedBacklog.removeAll()
        hasOrderedReader = false
        active.removeAll()
        away.removeAll()
        awaySince.removeAll()
        return [.invalidate(reason)]
    }

    /// Counts a dropped body, for the rejection readers.
    mutating func reject(_ rejection: Rejection) -> EventDirective {
        rejected[rejection.reason, default: 0] += 1
        return .reject(rejection)
    }
}
