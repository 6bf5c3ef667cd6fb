import Foundation
import Tandem
import TandemClock

/// What the coordinator needs of a session: an ordered channel for proposals, the session clock
/// and the participants who leave.
protocol CoordinationChannel: Sendable {
    /// Sends a proposal for ordering.
    func propose(_ proposal: PlaybackProposal) throws
    /// Every ordered record: the history first, then each new one.
    func orderedProposals() -> AsyncStream<OrderedInput>
    /// This participant's identity.
    var localParticipant: UUID { get }
    /// Participants who leave.
    func departures() -> AsyncStream<UUID>
    /// The session clock, once known.
    var clock: (any SessionClockSource)? { get }
    /// This participant's clock.
    var localClock: any MonotonicDerivedClock { get }
}

/// A group session as a coordination channel: proposals travel as JSON, sealed by the session.
struct SessionChannel<Activity: GroupActivity>: CoordinationChannel {
    let session: GroupSession<Activity>

    func propose(_ proposal: PlaybackProposal) throws {
        try session.sendOrdered(Array(try JSONEncoder().encode(proposal)))
    }

    func orderedProposals() -> AsyncStream<OrderedInput> {
        // Decoded as the session opens each one: no task in between.
        session.orderedDeliveries { OrderedInput($0) }
    }

    var localParticipant: UUID { session.localParticipant.id }

    func departures() -> AsyncStream<UUID> { session.departures() }
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

    /// The one place where the session's ordered record becomes the coordinator's: the JSON
    /// body decoded (a body over `CoordinationCore.maximumProposalBytes` is not even read), the
    /// relay's stamps carried over.
    init(_ delivery: OrderedPlaintext) {
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
                                         orderedAt: SessionInstant(nanoseconds: delivery.orderedAt),
                                         effectiveAt: SessionInstant(nanoseconds: delivery.effectiveAt), proposal: proposal))
    }
}
