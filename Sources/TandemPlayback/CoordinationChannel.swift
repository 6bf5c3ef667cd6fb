import Foundation
import Tandem
import TandemClock

/// What the coordinator needs of a session: an ordered channel for proposals, the session clock
/// and the participants who leave.
protocol CoordinationChannel: Sendable {
    /// Sends a proposal for ordering.
    func propose(_ proposal: PlaybackProposal) throws
    /// Every ordered proposal: the history first, then each new one.
    func orderedProposals() -> AsyncStream<OrderedProposal>
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

    func orderedProposals() -> AsyncStream<OrderedProposal> {
        // Decoded as the session opens each one: no task in between. A proposal this version
        // does not understand is skipped, not fatal.
        session.orderedDeliveries { delivery in
            guard let proposal = try? JSONDecoder().decode(PlaybackProposal.self, from: Data(delivery.body)) else { return nil }
            return OrderedProposal(originator: delivery.sender, order: delivery.order, effectiveAt: delivery.effectiveAt, proposal: proposal)
        }
    }

    func departures() -> AsyncStream<UUID> { session.departures() }
    var clock: (any SessionClockSource)? { session.sessionClock }
    var localClock: any MonotonicDerivedClock { session.localClock }
}
