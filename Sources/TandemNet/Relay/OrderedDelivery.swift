import Foundation

/// A broadcast the relay has ordered: every participant of the session receives the same ones,
/// in the same order, with the same stamps, the proposer included.
///
/// The relay numbers them 1, 2, 3, ... per session without gaps, stamps them with its own clock
/// (the session clock) and with a session time a little in the future at which they take effect:
/// far enough that they reach every connected participant first, as the relay measures their
/// round trips, and never earlier than the previous one's.
public struct OrderedDelivery: Sendable, Equatable {
    /// The participant who proposed it.
    public let from: UUID
    /// Its place in the session's order: 1, 2, 3, ... without gaps.
    public let order: UInt64
    /// The session time, in nanoseconds, at which the relay ordered it.
    public let orderedAt: Int64
    /// The session time, in nanoseconds, at which it should take effect: `orderedAt` plus the
    /// relay's lead, and never earlier than the previous delivery's `effectiveAt`.
    public let effectiveAt: Int64
    /// The opaque (sealed) body, as the proposer gave it.
    public let body: [UInt8]

    /// An ordered delivery.
    public init(from: UUID, order: UInt64, orderedAt: Int64, effectiveAt: Int64, body: [UInt8]) {
        self.from = from
        self.order = order
        self.orderedAt = orderedAt
        self.effectiveAt = effectiveAt
        self.body = body
    }
}
