import Foundation
import Tandem
import TandemClock

/// What the coordinator needs of a session (or of a coordination medium, `MediumChannel`): an
/// ordered channel for proposals, the session clock and the participants who leave.
protocol CoordinationChannel: Sendable {
    /// Sends a proposal for ordering (a playback record: the relay drops it once a snapshot
    /// covers it).
    func propose(_ proposal: PlaybackProposal) throws
    /// Sends a snapshot of the coordination state for ordering, as a snapshot record reflecting
    /// `snapshot.reflecting`.
    func publish(_ snapshot: CoordinationSnapshot) throws
    /// Hands every ordered record to `receive`: the history first, then each new one, one at a
    /// time and in order, on the thread that delivers it (no task in between: on the session's
    /// loop, the coordinator's `receive` steps its machine there and then). A channel that knows where the history ends
    /// says so with `.endOfHistory` (and `marksEndOfHistory`), so that a late joiner assembles
    /// it from its snapshots. A later call replaces the receiver. Before each record, the
    /// channel asks `wanted`: once it says false, the delivery ends (the record is not decoded
    /// nor handed over, and nothing more comes), as when the coordinator coordinates anew.
    func deliverOrdered(while wanted: @escaping @Sendable () -> Bool, to receive: @escaping @Sendable (OrderedInput) -> Void)
    /// Whether `deliverOrdered(while:to:)` hands over `.endOfHistory` once the history is delivered.
    var marksEndOfHistory: Bool { get }
    /// The participants present (this one included), when the channel knows them: the
    /// snapshot publisher is the lowest id among them.
    var presentParticipants: Set<UUID>? { get }
    /// This participant's identity.
    var localParticipant: UUID { get }
    /// Why the session's policy would refuse `proposal` from this participant now, nil when it
    /// would not (`PlaybackProposal.policyRejection(from:under:operatorNames:)`).
    func policyRejection(of proposal: PlaybackProposal) -> ProposalRejection?
    /// Hands `depart` each participant who leaves, on the thread that learns of it (the
    /// session's loop), with no task in between; the delivery ends once `wanted` says false.
    func deliverDepartures(while wanted: @escaping @Sendable () -> Bool, to depart: @escaping @Sendable (UUID) -> Void)
    /// Where a coordinator over this channel runs when it was given no scheduler (the session's
    /// loop, the medium's queue); nil for a serial queue of the coordinator's own.
    var executor: (any CoordinatorExecutor)? { get }
    /// The session clock, once known.
    var clock: (any SessionClockSource)? { get }
    /// This participant's clock.
    var localClock: any MonotonicDerivedClock { get }
}

extension CoordinationChannel {
    /// Snapshots go nowhere unless the channel carries them.
    func publish(_ snapshot: CoordinationSnapshot) throws {}
    /// A channel marks no end of history unless it says so: every record is applied as it comes.
    var marksEndOfHistory: Bool { false }
    /// Unknown unless the channel says.
    var presentParticipants: Set<UUID>? { nil }
    /// A channel without roles refuses nothing.
    func policyRejection(of proposal: PlaybackProposal) -> ProposalRejection? { nil }
    /// No one leaves unless the channel says.
    func deliverDepartures(while wanted: @escaping @Sendable () -> Bool, to depart: @escaping @Sendable (UUID) -> Void) {}
    /// A channel names no executor unless it says.
    var executor: (any CoordinatorExecutor)? { nil }
}

/// A snapshot over the size a snapshot may take (`CoordinationSnapshot.sizeRejection`): not
/// published.
struct SnapshotTooLarge: Error, CustomStringConvertible {
    /// Why, as a proposal of the same size would be rejected.
    let rejection: ProposalRejection
    var description: String { "\(rejection): not published" }
}

/// A group session as a coordination channel: proposals travel as JSON, sealed by the session.
struct SessionChannel<Activity: GroupActivity>: CoordinationChannel {
    let session: GroupSession<Activity>

    func propose(_ proposal: PlaybackProposal) throws {
        try session.sendOrdered(Array(try JSONEncoder().encode(proposal)), retention: .playback)
    }

    func publish(_ snapshot: CoordinationSnapshot) throws {
        let body = try snapshot.encoded()
        if let rejection = snapshot.sizeRejection(ofBody: body.count) { throw SnapshotTooLarge(rejection: rejection) }
        try session.sendOrdered(body, retention: .snapshot(reflecting: snapshot.reflecting))
    }

    /// The session hands over its backlog (the welcome's history, and whatever came since)
    /// while `orderedDeliveries` subscribes; `.endOfHistory` follows it. Each record is decoded
    /// and handed to `receive` as the session opens it, on the participant's loop: the path from
    /// a relay frame to the coordinator's machine is the link's read, the session's open and the
    /// machine's step, in one call on that loop (`PlaybackCoordinator.receive`), when the
    /// coordinator runs there (it does unless it was given a scheduler of its own).
    ///
    /// The subscription ends through the handler's return value once `wanted` says false (the
    /// coordinator coordinates with another session, or is gone): the session then hands this
    /// channel nothing more.
    func deliverOrdered(while wanted: @escaping @Sendable () -> Bool, to receive: @escaping @Sendable (OrderedInput) -> Void) {
        session.orderedDeliveries(while: { delivery in
            guard wanted() else { return false }
            // The roles before this record's order, whatever the session has folded since (a
            // joiner's history is folded whole before it is handed over).
            receive(OrderedInput(delivery).permitted(by: session.roles(before: delivery.order)))
            return true
        })
        if wanted() { receive(.endOfHistory) }
    }

    var marksEndOfHistory: Bool { true }
    var presentParticipants: Set<UUID>? { Set(session.activeParticipants.map(\.id)).union([session.localParticipant.id]) }

    var localParticipant: UUID { session.localParticipant.id }

    func policyRejection(of proposal: PlaybackProposal) -> ProposalRejection? {
        let roles = session.roles
        let names = roles.operators.map { session.displayName(of: $0) }.sorted()
        return proposal.policyRejection(from: session.localParticipant.id, under: roles, operatorNames: names)
    }

    /// Each departure the session announces, on the participant's loop, as it announces it.
    func deliverDepartures(while wanted: @escaping @Sendable () -> Bool, to depart: @escaping @Sendable (UUID) -> Void) {
        session.departures(while: { participant in
            guard wanted() else { return false }
            depart(participant)
            return true
        })
    }

    /// The session's event loop: the participant's loop, where its link and the session run.
    var executor: (any CoordinatorExecutor)? { LoopScheduler(loop: session.participantLoop) }
    var clock: (any SessionClockSource)? { session.sessionClock }
    var localClock: any MonotonicDerivedClock { session.localClock }
}

/// An ordered record as the coordinator takes it: a proposal, or a record whose body is none
/// (which the core skips, as it skips an invalid proposal, so that versions stay aligned).
public enum OrderedInput: Sendable, Equatable {
    /// A proposal, still to be validated.
    case proposal(OrderedProposal)
    /// A body that is no proposal this version can read.
    case unreadable(originator: UUID, order: UInt64, rejection: ProposalRejection)
    /// A snapshot of the coordination state (its header says so), still to be validated.
    case snapshot(SnapshotRecord)
    /// A record of another kind that shares the ordered stream (an activity change,
    /// `session.activity = …`, a chat line, or a role record): it takes its order number and is no business of the
    /// coordinator's, so it is passed over silently (no event, no rejection counted), and the
    /// relay keeps it by its own rules (a late joiner's history holds it past a snapshot).
    case other(originator: UUID, order: UInt64)
    /// A record that failed the session's checks (unopenable, forged, replayed, relabelled):
    /// it holds its order and nothing else, so it changes nothing but the version, silently (the
    /// session reports the rejection), and a late joiner's history counts its order as there.
    /// `originator` is whom the relay named.
    case placeholder(originator: UUID, order: UInt64)
    /// The history delivered on joining ends here: live records follow.
    case endOfHistory

    /// The one place where the session's ordered record becomes the coordinator's: the JSON
    /// body decoded (a body over `CoordinationCore.maximumProposalBytes` is not even read), the
    /// relay's stamps carried over. A placeholder stays one, whatever its header says.
    init(_ record: OrderedRecord) {
        guard let body = record.body.plaintext else {
            self = .placeholder(originator: record.sender, order: record.order)
            return
        }
        self.init(record.map { _ in body })
    }

    /// An opened record as the coordinator takes it.
    init(_ delivery: OrderedPlaintext) {
        if let reflecting = delivery.retention.reflectedOrder {
            self = .snapshot(SnapshotRecord(originator: delivery.sender, order: delivery.order,
                                            orderedAt: delivery.orderedInstant,
                                            reflecting: reflecting, body: delivery.body))
            return
        }
        if ActivityChange.isChange(delivery.body) || ChatRecord.isChat(delivery.body) || RoleRecord.isRoleRecord(delivery.body) {
            self = .other(originator: delivery.sender, order: delivery.order)
            return
        }
        guard delivery.body.count <= CoordinationCore.maximumProposalBytes else {
            self = .unreadable(originator: delivery.sender, order: delivery.order,
                               rejection: ProposalRejection(.oversized, "a proposal of \(delivery.body.count) bytes is over "
                                                                + "\(CoordinationCore.maximumProposalBytes)"))
            return
        }
        guard let proposal = try? JSONDecoder().decode(PlaybackProposal.self, from: Data(delivery.body)) else {
            self = .unreadable(originator: delivery.sender, order: delivery.order,
                               rejection: ProposalRejection(.unreadable, "a body of \(delivery.body.count) bytes is no proposal "
                                                                + "this version understands"))
            return
        }
        self = .proposal(OrderedProposal(originator: delivery.sender, order: delivery.order,
                                         orderedAt: delivery.orderedInstant,
                                         effectiveAt: delivery.effectiveInstant, proposal: proposal))
    }
}
