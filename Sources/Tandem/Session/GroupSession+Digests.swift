import Foundation

/// What the relay showed this participant, in a form to compare with others: the digest of each
/// recent ordered record (`OrderedDigests`). The relay orders sealed bodies it cannot read; two
/// participants with different digests under one order were shown different histories.
extension GroupSession {
    /// The digest (32 hexadecimal digits) of the ordered record this participant took under
    /// `order`, while it is among the newest 256; nil otherwise.
    public func orderedDigest(atOrder order: UInt64) -> String? {
        view.withLock { $0.digests.digest(atOrder: order) }.map(OrderedDigests.hex)
    }

    /// The newest order this participant took and its record's digest; nil before the first.
    public var latestOrderedDigest: (order: UInt64, digest: String)? {
        view.withLock { $0.digests.latest }.map { (order: $0.order, digest: OrderedDigests.hex($0.digest)) }
    }
}
