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

    /// The digest (32 hexadecimal digits) of the `count` ordered records this participant took
    /// under the orders ending at `order`, while all are among the newest 256; nil otherwise. A
    /// window of one is `orderedDigest(atOrder:)`.
    public func orderedDigest(endingAt order: UInt64, count: Int) -> String? {
        view.withLock { $0.digests.digest(endingAt: order, count: count) }.map(OrderedDigests.hex)
    }

    /// The newest order this participant took, how many orders up to it it holds without a gap
    /// (up to 32), and their window's digest (`orderedDigest(endingAt:count:)`); nil before the
    /// first record.
    public var latestOrderedWindow: (order: UInt64, count: Int, digest: String)? {
        view.withLock { $0.digests.latestWindow }.map { (order: $0.order, count: $0.count, digest: OrderedDigests.hex($0.digest)) }
    }
}
