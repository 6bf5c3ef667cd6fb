import Foundation

/// A record the relay has ordered, defined once for every layer that carries one: the relay's
/// frames (`RelayOrderedEntry`, an opaque sealed body), the link's events (`OrderedDelivery`) and
/// the session's opened proposals (`OrderedPlaintext`).
///
/// `sender` is whoever the layer holding it vouches for: the relay's word in the frames and the
/// link, the verified signer once the sessions layer has opened the body.
public struct Ordered<Body: Sendable>: Sendable {
    /// Who proposed it (see the type's note for whose word this is).
    public var sender: UUID
    /// Its place in the session's order: 1, 2, 3, ... without gaps.
    public var order: UInt64
    /// The session time, in nanoseconds, at which the relay ordered it.
    public var orderedAt: Int64
    /// The session time, in nanoseconds, at which it takes effect: `orderedAt` plus the relay's
    /// lead, never earlier than the previous record's.
    public var effectiveAt: Int64
    /// How long the relay keeps it for late joiners, as its proposer labelled it (the relay's
    /// word until the sessions layer has checked it against the signed body).
    public var retention: OrderedRetention
    /// What was ordered.
    public var body: Body

    /// A record (kept under the history's caps unless `retention` says otherwise).
    public init(sender: UUID, order: UInt64, orderedAt: Int64, effectiveAt: Int64, retention: OrderedRetention = .kept,
                body: Body) {
        self.sender = sender
        self.order = order
        self.orderedAt = orderedAt
        self.effectiveAt = effectiveAt
        self.retention = retention
        self.body = body
    }

    /// The same record with another body (and, when given, another sender), its retention kept.
    public func map<Other: Sendable>(sender: UUID? = nil, _ transform: (Body) throws -> Other) rethrows -> Ordered<Other> {
        Ordered<Other>(sender: sender ?? self.sender, order: order, orderedAt: orderedAt, effectiveAt: effectiveAt,
                       retention: retention, body: try transform(body))
    }
}

extension Ordered: Equatable where Body: Equatable {}
extension Ordered: Hashable where Body: Hashable {}
