import Foundation

/// A participant that holds another chain head than this one at an order: the relay showed the
/// two different histories (`GroupSession.orderedChainDivergences()`).
public struct OrderedChainDivergence: Sendable, Equatable, Hashable {
    /// Who holds the other head: a report's sender, or a snapshot's writer.
    public var participant: UUID
    /// The order of the heads compared.
    public var order: UInt64

    /// A divergence with `participant` at `order`.
    public init(participant: UUID, order: UInt64) {
        self.participant = participant
        self.order = order
    }
}
