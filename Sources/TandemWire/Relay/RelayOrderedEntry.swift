import Foundation

/// A broadcast the relay has ordered, as frames carry it: who proposed it, its place in the
/// session's order, the relay's stamps, and the opaque (sealed) body.
public struct RelayOrderedEntry: Sendable, Hashable {
    /// The participant who proposed it.
    public var sender: UUID
    /// Its place in the session's order: 1, 2, 3, ... without gaps.
    public var order: UInt64
    /// The session time, in nanoseconds, at which the relay ordered it.
    public var orderedAt: Int64
    /// The session time, in nanoseconds, at which it takes effect.
    public var effectiveAt: Int64
    /// The opaque (sealed) body, at most `RelayWireLimits.maximumBody` bytes.
    public var body: [UInt8]

    /// An entry.
    public init(sender: UUID, order: UInt64, orderedAt: Int64, effectiveAt: Int64, body: [UInt8]) {
        self.sender = sender
        self.order = order
        self.orderedAt = orderedAt
        self.effectiveAt = effectiveAt
        self.body = body
    }
}
