import TandemWire

/// A broadcast the relay has ordered, as the link reports it: every participant of the session
/// receives the same ones, in the same order, with the same stamps, the proposer included.
///
/// The relay numbers them 1, 2, 3, ... per session without gaps, stamps them with its own clock
/// (the session clock) and with a session time a little in the future at which they take effect:
/// far enough that they reach every connected participant first, as the relay measures their
/// round trips, and never earlier than the previous one's. `sender` is the relay's word; the
/// sessions layer trusts only the signature inside the body.
public typealias OrderedDelivery = Ordered<[UInt8]>
