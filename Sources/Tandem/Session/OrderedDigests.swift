import CSodium
import Foundation
import TandemNet

/// A digest of each ordered record this participant took, for its recent orders, so that
/// participants can compare what the relay showed them: the relay orders the sealed bodies it
/// cannot read, and could give two participants different records under one order number (or a
/// late joiner a history of its choosing). Two participants holding different digests for one
/// order were shown different histories (`GroupSession.orderedDigest(atOrder:)`; a watch party
/// compares them through its health reports and says so as `relay-divergence`).
///
/// The digest is BLAKE2b (`crypto_generichash`, 16 bytes) over a domain tag, the order, the
/// sender, the ordering and effective instants and the sealed body: what every recipient of the
/// record received alike. A window's digest (`digest(endingAt:count:)`) covers a run of orders
/// at once, so that a difference some records back still shows when the newest are compared
/// (a relay that exchanged two records, then went on alike for everyone). Pure, and bounded:
/// the newest `capacity` orders.
struct OrderedDigests: Sendable, Equatable {
    /// How many recent orders are kept.
    static let capacity = 256

    private var entries: [(order: UInt64, digest: [UInt8])] = []
    private var next = 0

    static func == (lhs: OrderedDigests, rhs: OrderedDigests) -> Bool {
        lhs.entries.elementsEqual(rhs.entries) { $0.order == $1.order && $0.digest == $1.digest } && lhs.next == rhs.next
    }

    /// Records `delivery`'s digest under its order.
    mutating func record(_ delivery: OrderedDelivery) {
        let entry = (order: delivery.order, digest: Self.digest(of: delivery))
        if entries.count < Self.capacity {
            entries.append(entry)
        } else {
            entries[next] = entry
            next = (next + 1) % Self.capacity
        }
    }

    /// The digest of the record taken under `order`, if it is among the recent ones.
    func digest(atOrder order: UInt64) -> [UInt8]? {
        entries.last { $0.order == order }?.digest
    }

    /// The newest order taken and its digest.
    var latest: (order: UInt64, digest: [UInt8])? {
        entries.isEmpty ? nil : entries[(next + entries.count - 1) % entries.count]
    }

    /// The most orders a window covers.
    static let window = 32

    /// The digest of the `count` orders ending at `order` (`order − count + 1` through `order`),
    /// when every one of them is among the recent ones: the record's own digest for a window of
    /// one, else BLAKE2b over the records' digests in order. nil when one is missing (a late
    /// joiner did not take orders a snapshot covered) or `count` is not in `1...capacity`.
    func digest(endingAt order: UInt64, count: Int) -> [UInt8]? {
        guard (1...Self.capacity).contains(count), order >= UInt64(count) else { return nil }
        var digests: [[UInt8]] = []
        for index in (order - UInt64(count) + 1)...order {
            guard let digest = digest(atOrder: index) else { return nil }
            digests.append(digest)
        }
        guard digests.count > 1 else { return digests.first }
        var input = Array("tandem.ordered.window.v1".utf8)
        for digest in digests { input += digest }
        var hash = [UInt8](repeating: 0, count: 16)
        let result = crypto_generichash(&hash, hash.count, input, UInt64(input.count), nil, 0)
        precondition(result == 0, "crypto_generichash failed")
        return hash
    }

    /// The newest order taken, how many orders up to it this participant holds without a gap
    /// (at most `window`), and the digest of that window.
    var latestWindow: (order: UInt64, count: Int, digest: [UInt8])? {
        guard let newest = latest?.order else { return nil }
        var count = 1
        while count < Self.window, newest > UInt64(count), digest(atOrder: newest - UInt64(count)) != nil { count += 1 }
        return digest(endingAt: newest, count: count).map { (newest, count, $0) }
    }

    /// The digest of one record.
    static func digest(of delivery: OrderedDelivery) -> [UInt8] {
        var input = Array("tandem.ordered.v1".utf8)
        withUnsafeBytes(of: delivery.order.bigEndian) { input += $0 }
        withUnsafeBytes(of: delivery.sender.uuid) { input += $0 }
        withUnsafeBytes(of: delivery.orderedInstant.nanoseconds.bigEndian) { input += $0 }
        withUnsafeBytes(of: delivery.effectiveInstant.nanoseconds.bigEndian) { input += $0 }
        input += delivery.body
        var hash = [UInt8](repeating: 0, count: 16)
        let result = crypto_generichash(&hash, hash.count, input, UInt64(input.count), nil, 0)
        precondition(result == 0, "crypto_generichash failed")
        return hash
    }

    /// `digest` as 32 lowercase hexadecimal digits.
    static func hex(_ digest: [UInt8]) -> String {
        digest.map { String(format: "%02x", $0) }.joined()
    }
}
