import CSodium
import Foundation
import TandemNet
import TandemWire

/// A hash chain over the session's whole order, as this participant took it, so that
/// participants can compare everything the relay showed them with one value: the relay orders
/// sealed bodies it cannot read, and could give two participants different records under one
/// order, exchange two records for one of them, or give a late joiner a history of its choosing.
///
/// Each ordered record extends the chain: `head(n) = BLAKE2b-256(tag, head(n − 1), digest(n))`,
/// where a record's digest covers what every recipient received alike (its order, sender,
/// ordering and effective instants, retention and sealed body) and `head(0)` is 32 zero bytes.
/// Two participants holding different heads for one order were shown different histories at
/// that order or at any order before it, however far back.
///
/// Where the chain starts (`Anchor`):
/// - at order 0, for a participant that took every record from order 1 (`genesis`);
/// - at the order a snapshot reflects, for a late joiner whose history begins there: the
///   snapshot's writer seals its own head at that order inside the snapshot
///   (`SnapshotChainHead`), so the relay cannot put another there, and the joiner chains on
///   from it over the records after it. That head is the writer's word until more than one other
///   participant reports a head that agrees with this chain (`isVouched`).
///
/// A record that does not follow the newest one chained (a gap) is held loose, with the
/// contiguous run it starts, until a snapshot's head lets the chain start again under it.
/// Another participant's head (`compare(order:head:from:)`) is compared at once when this chain
/// holds that order, or held until it reaches it; a snapshot's head is compared like a report
/// from its writer. Pure and bounded: `capacity` heads, `maximumLoose` loose records and
/// `maximumHeld` held reports.
struct OrderedChain: Sendable {
    /// Where the chain starts.
    enum Anchor: Sendable, Equatable {
        /// Order 0: this participant chained every record from order 1 itself.
        case genesis
        /// The head a snapshot signed by `writer` carried for `order`.
        case snapshot(order: UInt64, writer: UUID)
    }

    /// What another participant's head says against this chain.
    typealias Comparison = OrderedChainComparison

    /// A participant whose head disagreed with this chain's at an order.
    struct Divergence: Sendable, Equatable {
        /// Who holds the other head (a snapshot's writer for a snapshot's head).
        var participant: UUID
        /// The order of the heads compared.
        var order: UInt64
    }

    /// How many of the newest heads are kept.
    static let capacity = 256
    /// The bytes of a head.
    static let headLength = 32
    /// The most records held loose, past a gap, awaiting a snapshot to chain from.
    static let maximumLoose = 4096
    /// The most reports held until this chain reaches their orders, one a participant.
    static let maximumHeld = 256
    /// How many other participants must agree before a snapshot's head stands vouched.
    static let vouchersNeeded = 2

    private static let linkTag = Array("tandem.chain.link.v1".utf8)
    private static let recordTag = Array("tandem.chain.record.v1".utf8)
    /// The head before order 1.
    static let genesisHead = [UInt8](repeating: 0, count: headLength)

    /// Where the chain starts; nil before it does.
    private(set) var anchor: Anchor?
    /// The newest order chained; nil before the chain starts.
    private(set) var tipOrder: UInt64?
    /// The newest heads, oldest first from `start` around the ring, for orders
    /// `tipOrder − count + 1 … tipOrder`.
    private var heads: [UInt8] = []
    private var start = 0
    private var count = 0
    /// The participants whose heads agreed with this chain since it started from a snapshot.
    private(set) var vouchers: Set<UUID> = []
    /// A contiguous run of records past a gap: the first one's order and their digests.
    private var looseFirst: UInt64 = 0
    private var loose: [UInt8] = []
    /// Reports of orders this chain has not reached, the newest one a participant.
    private var held: [UUID: (order: UInt64, head: [UInt8])] = [:]

    /// Whether the chain's start is more than one participant's word: chained from order 1 by
    /// this participant, or a snapshot's head that `vouchersNeeded` other participants' heads
    /// have agreed with since.
    var isVouched: Bool {
        switch anchor {
        case .genesis: true
        case .snapshot: vouchers.count >= Self.vouchersNeeded
        case nil: false
        }
    }

    /// The newest order chained and its head.
    var tip: (order: UInt64, head: [UInt8])? {
        guard let tipOrder, count > 0 else { return nil }
        return (tipOrder, ringHead(count - 1))
    }

    /// The head at `order`, while it is among the newest `capacity` chained.
    func head(atOrder order: UInt64) -> [UInt8]? {
        guard let tipOrder, order <= tipOrder, tipOrder - order < UInt64(count) else { return nil }
        return ringHead(count - 1 - Int(tipOrder - order))
    }

    /// Takes `delivery`, the next record taken in order (never one at or below the last): it
    /// extends the chain when it follows the newest chained (or is order 1 of a chain not
    /// started), else it is held loose. Answers the held reports that the chain now reaches and
    /// that disagree.
    mutating func take(_ delivery: OrderedDelivery) -> [Divergence] {
        let digest = Self.digest(of: delivery)
        if tipOrder == nil, anchor == nil, delivery.order == 1, loose.isEmpty {
            anchor = .genesis
            push(Self.genesisHead, order: 0)
        }
        guard let tip, delivery.order == tip.order + 1 else {
            holdLoose(digest, order: delivery.order)
            return []
        }
        push(Self.link(tip.head, digest), order: delivery.order)
        return resolveHeld()
    }

    /// A snapshot signed by `writer` says its writer's head at `order` (the order it reflects)
    /// is `head`: compared with this chain's when it holds that order (the writer agreeing
    /// vouches as another's report does), or, when this chain has not started or stopped at a
    /// gap and its loose records continue that order without a gap to the newest taken, the
    /// chain starts there from that head.
    mutating func takeSnapshotHead(_ head: [UInt8], atOrder order: UInt64, writer: UUID) -> SnapshotHeadOutcome {
        if self.head(atOrder: order) != nil {
            return compare(order: order, head: head, from: writer) == .diverges ? .diverges : .agrees
        }
        guard head.count == Self.headLength, let looseLast, looseFirst <= order + 1, order < looseLast else { return .unknown }
        let skipped = Int(order + 1 - looseFirst)
        let digests = loose[(skipped * Self.headLength)...]
        anchor = .snapshot(order: order, writer: writer)
        vouchers = []
        (heads, start, count, tipOrder) = ([], 0, 0, nil)
        push(head, order: order)
        var current = head
        var next = order + 1
        for offset in stride(from: digests.startIndex, to: digests.endIndex, by: Self.headLength) {
            current = Self.link(current, Array(digests[offset..<(offset + Self.headLength)]))
            push(current, order: next)
            next += 1
        }
        (loose, looseFirst) = ([], 0)
        return .anchored(resolveHeld())
    }

    /// What a snapshot's head did.
    enum SnapshotHeadOutcome: Sendable, Equatable {
        /// It agrees with this chain's head at its order.
        case agrees
        /// It disagrees with this chain's head at its order.
        case diverges
        /// The chain starts from it; these held reports disagree with the chain it starts.
        case anchored([Divergence])
        /// Nothing to compare it with, and the chain cannot start from it.
        case unknown
    }

    /// Compares `head`, which participant `from` holds at `order`, with this chain's: an agreeing
    /// head vouches for a snapshot's start; one at an order this chain has not reached is held
    /// (the newest one a participant, up to `maximumHeld` participants) and compared once it does
    /// (`take(_:)` answers it then).
    mutating func compare(order: UInt64, head: [UInt8], from participant: UUID) -> Comparison {
        if let own = self.head(atOrder: order) {
            guard own == head else { return .diverges }
            if case .snapshot = anchor { vouchers.insert(participant) }
            return .agrees
        }
        guard tipOrder.map({ order > $0 }) ?? true else { return .unknown }
        guard held[participant] != nil || held.count < Self.maximumHeld else { return .unknown }
        held[participant] = (order, head)
        return .held
    }

    // MARK: Digests

    /// A record's digest: BLAKE2b-256 over a domain tag and what every recipient received alike.
    static func digest(of delivery: OrderedDelivery) -> [UInt8] {
        var writer = ByteWriter(capacity: recordTag.count + 64 + delivery.body.count)
        writer.fixed(recordTag)
        writer.uint64(delivery.order)
        writer.uuid(delivery.sender)
        writer.uint64(UInt64(bitPattern: delivery.orderedInstant.nanoseconds))
        writer.uint64(UInt64(bitPattern: delivery.effectiveInstant.nanoseconds))
        writer.retention(delivery.retention)
        writer.fixed(delivery.body)
        return hash(writer.bytes)
    }

    /// The head after `previous` over a record of digest `digest`.
    static func link(_ previous: [UInt8], _ digest: [UInt8]) -> [UInt8] {
        hash(linkTag + previous + digest)
    }

    /// `head` as 64 lowercase hexadecimal digits.
    static func hex(_ head: [UInt8]) -> String {
        head.map { String(format: "%02x", $0) }.joined()
    }

    /// The head that `text` spells in 64 hexadecimal digits; nil for anything else.
    static func head(hex text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count == headLength * 2 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(headLength)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private static func hash(_ input: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: headLength)
        let result = crypto_generichash(&output, headLength, input, UInt64(input.count), nil, 0)
        precondition(result == 0, "crypto_generichash failed")
        return output
    }

    // MARK: Storage

    private var looseLast: UInt64? {
        loose.isEmpty ? nil : looseFirst + UInt64(loose.count / Self.headLength) - 1
    }

    private func ringHead(_ index: Int) -> [UInt8] {
        let slot = (start + index) % Self.capacity
        return Array(heads[(slot * Self.headLength)..<((slot + 1) * Self.headLength)])
    }

    private mutating func push(_ head: [UInt8], order: UInt64) {
        if count < Self.capacity {
            heads += head
            count += 1
        } else {
            heads.replaceSubrange((start * Self.headLength)..<((start + 1) * Self.headLength), with: head)
            start = (start + 1) % Self.capacity
        }
        tipOrder = order
    }

    private mutating func holdLoose(_ digest: [UInt8], order: UInt64) {
        if looseLast.map({ order != $0 + 1 }) ?? true {
            (loose, looseFirst) = ([], order)
        }
        loose += digest
        if loose.count > Self.maximumLoose * Self.headLength {
            // Half at once, so that a long run past a gap costs one move per half of the bound.
            let dropped = Self.maximumLoose / 2
            loose.removeFirst(dropped * Self.headLength)
            looseFirst += UInt64(dropped)
        }
    }

    private mutating func resolveHeld() -> [Divergence] {
        guard !held.isEmpty, let tipOrder else { return [] }
        var found: [Divergence] = []
        for (participant, claim) in held where claim.order <= tipOrder {
            held[participant] = nil
            guard let own = head(atOrder: claim.order) else { continue }
            if own == claim.head {
                if case .snapshot = anchor { vouchers.insert(participant) }
            } else {
                found.append(Divergence(participant: participant, order: claim.order))
            }
        }
        return found.sorted { ($0.order, $0.participant.uuidString) < ($1.order, $1.participant.uuidString) }
    }
}
