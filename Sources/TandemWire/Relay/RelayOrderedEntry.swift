import Foundation

/// A broadcast the relay has ordered, as frames carry it: who proposed it (the relay's word),
/// its place in the session's order, the relay's stamps, and the opaque (sealed, signed) body of
/// at most `RelayWireLimits.maximumBody` bytes.
public typealias RelayOrderedEntry = Ordered<[UInt8]>
