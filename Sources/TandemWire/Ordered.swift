import Foundation
import TandemClock

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
    /// The session instant at which the relay ordered it.
    public var orderedInstant: SessionInstant
    /// The session instant at which it takes effect: `orderedInstant` plus the relay's lead, never
    /// earlier than the previous record's.
    public var effectiveInstant: SessionInstant
    /// How long the relay keeps it for late joiners, as its proposer labelled it (the relay's
    /// word until the sessions layer has checked it against the signed body).
    public var retention: OrderedRetention
    /// What was ordered.
    public var body: Body

    /// A record (kept under the history's caps unless `retention` says otherwise).
    public init(sender: UUID, order: UInt64, orderedInstant: SessionInstant, effectiveInstant: SessionInstant,
                retention: OrderedRetention = .kept, body: Body) {
        self.sender = sender
        self.order = order
        self.orderedInstant = orderedInstant
        self.effectiveInstant = effectiveInstant
        self.retention = retention
        self.body = body
    }

    /// A record whose instants are in bare nanoseconds of session time, as the wire carries them.
    public init(sender: UUID, order: UInt64, orderedAt: Int64, effectiveAt: Int64, retention: OrderedRetention = .kept,
                body: Body) {
        self.init(sender: sender, order: order, orderedInstant: SessionInstant(nanoseconds: orderedAt),
                  effectiveInstant: SessionInstant(nanoseconds: effectiveAt), retention: retention, body: body)
    }

    /// `orderedInstant` in bare nanoseconds.
    @available(*, deprecated, renamed: "orderedInstant")
    public var orderedAt: Int64 {
        get { orderedInstant.nanoseconds }
        set { orderedInstant = SessionInstant(nanoseconds: newValue) }
    }

    /// `effectiveInstant` in bare nanoseconds.
    @available(*, deprecated, renamed: "effectiveInstant")
    public var effectiveAt: Int64 {
        get { effectiveInstant.nanoseconds }
        set { effectiveInstant = SessionInstant(nanoseconds: newValue) }
    }

    /// The same record with another body (and, when given, another sender), its retention kept.
    public func map<Other: Sendable>(sender: UUID? = nil, _ transform: (Body) throws -> Other) rethrows -> Ordered<Other> {
        Ordered<Other>(sender: sender ?? self.sender, order: order, orderedInstant: orderedInstant,
                       effectiveInstant: effectiveInstant, retention: retention, body: try transform(body))
    }
}

extension Ordered: Equatable where Body: Equatable {}
extension Ordered: Hashable where Body: Hashable {}
