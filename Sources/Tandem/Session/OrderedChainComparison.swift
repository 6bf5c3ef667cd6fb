import Foundation
import TandemClock

/// What another participant's chain head says against this participant's
/// (`GroupSession.compareOrderedChain(order:head:from:)`).
public enum OrderedChainComparison: Sendable, Equatable {
    /// This participant holds the same head for that order.
    case agrees
    /// This participant holds another head for that order: the relay showed the two different
    /// histories, at that order or at one before it.
    case diverges
    /// This participant has not reached that order: held, and compared once it does (a
    /// disagreement then comes as an `OrderedChainDivergence`).
    case held
    /// This participant cannot say: the order is before where its chain starts, older than the
    /// heads it keeps, or past a gap in what it took.
    case unknown
}

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

/// Where this participant's chain over the session's order stands (`GroupSession.orderedChain`).
public struct OrderedChainStatus: Sendable, Equatable {
    /// The newest order chained.
    public var order: UInt64
    /// The head at `order`, 64 hexadecimal digits.
    public var head: String
    /// The order the chain starts after: 0 when this participant chained every record from
    /// order 1, else the order a snapshot reflected.
    public var startOrder: UInt64
    /// The participant whose snapshot gave the chain's start; nil from order 1.
    public var startWriter: UUID?
    /// Whether the start is more than one participant's word: from order 1, or a snapshot's
    /// head that more than one other participant's heads have agreed with since.
    public var isVouched: Bool

    /// A status.
    public init(order: UInt64, head: String, startOrder: UInt64, startWriter: UUID?, isVouched: Bool) {
        (self.order, self.head, self.startOrder, self.startWriter, self.isVouched) = (order, head, startOrder, startWriter, isVouched)
    }
}

/// The relay's session time ran ahead of this participant's own monotonic clock by more than
/// delivery and drift allow, at an ordered record (`GroupSession.sessionTimeJumps()`).
public struct SessionTimeJump: Sendable, Equatable, Hashable {
    /// The order of the record stamped too far ahead.
    public var order: UInt64
    /// How far past the bound the relay's ordering instant was.
    public var ahead: TimeSpan

    /// A jump at `order`, `ahead` past the bound.
    public init(order: UInt64, ahead: TimeSpan) {
        self.order = order
        self.ahead = ahead
    }
}
