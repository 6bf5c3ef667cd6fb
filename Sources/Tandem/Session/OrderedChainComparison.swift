import Foundation

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
