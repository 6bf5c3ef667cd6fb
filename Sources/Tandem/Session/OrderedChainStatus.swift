import Foundation

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
