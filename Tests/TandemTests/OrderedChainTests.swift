import Foundation
import Testing
@testable import Tandem
import TandemClock
import TandemNet
import TandemWire

/// The hash chain over the session's order: how it extends and what it keeps, a difference any
/// number of orders back, a forged snapshot head, a late joiner that starts from a snapshot's
/// head (unvouched until two others agree), and heads held until the chain reaches them. Pure:
/// records as the relay would hand them, no clock.
@Suite struct OrderedChainTests {
    static let ana = UUID(), ben = UUID(), cy = UUID(), dee = UUID()

    /// The record ordered `order`, carrying `body`.
    static func record(_ order: UInt64, _ body: String, retention: OrderedRetention = .playback) -> OrderedDelivery {
        OrderedDelivery(sender: ana, order: order, orderedAt: Int64(order) * 1_000, effectiveAt: Int64(order) * 1_000 + 500,
                        retention: retention, body: Array(body.utf8))
    }

    /// Records 1 through `count`, each with a body of its own.
    static func records(_ count: UInt64) -> [OrderedDelivery] {
        (1...count).map { record($0, "change \($0)") }
    }

    static func chain(_ records: [OrderedDelivery]) -> OrderedChain {
        var chain = OrderedChain()
        for record in records { #expect(chain.take(record).isEmpty) }
        return chain
    }

    @Test func eachRecordExtendsTheHeadBeforeIt() throws {
        let records = Self.records(300)
        let chain = Self.chain(records)
        #expect(chain.anchor == .genesis && chain.isVouched)
        let tip = try #require(chain.tip)
        #expect(tip.order == 300 && tip.head.count == 32)
        // Every kept head is the one before it linked over its record's digest.
        for order in UInt64(46)...300 {
            let before = try #require(chain.head(atOrder: order - 1))
            #expect(chain.head(atOrder: order) == OrderedChain.link(before, OrderedChain.digest(of: records[Int(order) - 1])))
        }
        // The newest 256 are kept, no older.
        #expect(chain.head(atOrder: 45) != nil)
        #expect(chain.head(atOrder: 44) == nil)
        #expect(chain.head(atOrder: 301) == nil)
        // From order 1 the first head is the genesis head linked over record 1.
        let short = Self.chain(Array(records.prefix(3)))
        #expect(short.head(atOrder: 0) == OrderedChain.genesisHead)
        #expect(short.head(atOrder: 1) == OrderedChain.link(OrderedChain.genesisHead, OrderedChain.digest(of: records[0])))
        #expect(OrderedChain.head(hex: OrderedChain.hex(tip.head)) == tip.head)
        #expect(OrderedChain.head(hex: String(repeating: "g", count: 64)) == nil)
    }

    @Test func aRecordsDigestCoversEveryFieldEveryRecipientGets() {
        let record = Self.record(7, "play")
        let digest = OrderedChain.digest(of: record)
        var other = record
        other.order = 8
        #expect(OrderedChain.digest(of: other) != digest)
        other = record
        other.sender = Self.ben
        #expect(OrderedChain.digest(of: other) != digest)
        other = record
        other.orderedInstant = SessionInstant(nanoseconds: record.orderedInstant.nanoseconds + 1)
        #expect(OrderedChain.digest(of: other) != digest)
        other = record
        other.effectiveInstant = SessionInstant(nanoseconds: record.effectiveInstant.nanoseconds + 1)
        #expect(OrderedChain.digest(of: other) != digest)
        other = record
        other.retention = .kept
        #expect(OrderedChain.digest(of: other) != digest)
        other = record
        other.body[0] ^= 1
        #expect(OrderedChain.digest(of: other) != digest)
    }

    /// Two records exchanged 190 orders back, everything after alike: the newest heads differ,
    /// and a report of either shows it to the other.
    @Test func aRecordExchangedFarBackShowsAtTheNewestHead() throws {
        let records = Self.records(200)
        var exchanged = records
        (exchanged[9].body, exchanged[10].body) = (records[10].body, records[9].body)
        var honest = Self.chain(records), shown = Self.chain(exchanged)
        #expect(honest.head(atOrder: 9) == shown.head(atOrder: 9))
        #expect(honest.head(atOrder: 10) != shown.head(atOrder: 10))
        let newest = try #require(shown.tip)
        #expect(newest.order == 200 && newest.head != honest.tip?.head)
        #expect(honest.compare(order: newest.order, head: newest.head, from: Self.ben) == .diverges)
        #expect(shown.compare(order: 200, head: try #require(honest.tip?.head), from: Self.ana) == .diverges)
        // Alike: agrees.
        var twin = Self.chain(records)
        #expect(twin.compare(order: 200, head: try #require(honest.tip?.head), from: Self.ana) == .agrees)
        #expect(twin.compare(order: 150, head: try #require(honest.head(atOrder: 150)), from: Self.ana) == .agrees)
        // Older than the heads kept: nothing to say.
        var long = Self.chain(Self.records(300))
        #expect(long.compare(order: 10, head: OrderedChain.genesisHead, from: Self.ana) == .unknown)
    }

    /// A report of an order this chain has not reached is held, and answered when it does.
    @Test func aHeadAheadOfTheChainIsHeldUntilItGetsThere() throws {
        let records = Self.records(40)
        var exchanged = records
        (exchanged[4].body, exchanged[5].body) = (records[5].body, records[4].body)
        let ahead = Self.chain(exchanged)
        var behind = Self.chain(Array(records.prefix(20)))
        #expect(behind.compare(order: 30, head: try #require(ahead.head(atOrder: 30)), from: Self.ben) == .held)
        for record in records[20..<29] { #expect(behind.take(record).isEmpty) }
        #expect(behind.take(records[29]) == [OrderedChain.Divergence(participant: Self.ben, order: 30)])
        // Answered once: the next record finds nothing held.
        #expect(behind.take(records[30]).isEmpty)

        // An honest head held is answered with no divergence.
        let honest = Self.chain(records)
        var late = Self.chain(Array(records.prefix(20)))
        #expect(late.compare(order: 25, head: try #require(honest.head(atOrder: 25)), from: Self.cy) == .held)
        for record in records[20..<40] { #expect(late.take(record).isEmpty) }
        #expect(late.tip?.head == honest.tip?.head)
    }

    @Test func aLateJoinerStartsFromASnapshotsHeadAndIsVouchedWhenTwoOthersAgree() throws {
        let records = Self.records(120)
        let honest = Self.chain(records)
        // The history: records 1 and 2 (kept), then 101 through 120, the snapshot at 110
        // reflecting 100.
        var joiner = OrderedChain()
        for record in records.prefix(2) { _ = joiner.take(record) }
        for record in records[100..<110] { _ = joiner.take(record) }
        #expect(joiner.tip?.order == 2)
        // Until the snapshot, the chain reaches order 2 only: a report of 105 is held.
        #expect(joiner.compare(order: 105, head: try #require(honest.head(atOrder: 105)), from: Self.dee) == .held)
        let writerHead = try #require(honest.head(atOrder: 100))
        #expect(joiner.takeSnapshotHead(writerHead, atOrder: 100, writer: Self.ana) == .anchored([]))
        #expect(joiner.anchor == .snapshot(order: 100, writer: Self.ana))
        for record in records[110..<120] { #expect(joiner.take(record).isEmpty) }
        #expect(joiner.tip?.order == 120 && joiner.tip?.head == honest.tip?.head)
        #expect(joiner.head(atOrder: 99) == nil)
        // Dee's held report agreed: one voucher; the writer's makes two.
        #expect(joiner.vouchers == [Self.dee] && !joiner.isVouched)
        #expect(joiner.compare(order: 120, head: try #require(honest.tip?.head), from: Self.ana) == .agrees)
        #expect(joiner.isVouched)
    }

    @Test func aLateJoinerFromASnapshotStaysUnvouchedWithOneOtherAndDivergesFromAForgedHead() throws {
        let records = Self.records(120)
        let honest = Self.chain(records)
        var joiner = OrderedChain()
        for record in records[100..<120] { _ = joiner.take(record) }
        // Order 101 first: no chain until a snapshot's head.
        #expect(joiner.tip == nil && joiner.anchor == nil)
        #expect(joiner.takeSnapshotHead(try #require(honest.head(atOrder: 100)), atOrder: 100, writer: Self.ana) == .anchored([]))
        #expect(joiner.compare(order: 120, head: try #require(honest.tip?.head), from: Self.ana) == .agrees)
        #expect(joiner.compare(order: 119, head: try #require(honest.head(atOrder: 119)), from: Self.ana) == .agrees)
        #expect(!joiner.isVouched, "one other participant, however often, is one word")

        // A snapshot whose head is not the one the others hold: the joiner's whole chain differs
        // from theirs, and the first report says so.
        var misled = OrderedChain()
        for record in records[100..<120] { _ = misled.take(record) }
        var forged = try #require(honest.head(atOrder: 100))
        forged[0] ^= 1
        #expect(misled.takeSnapshotHead(forged, atOrder: 100, writer: Self.ben) == .anchored([]))
        #expect(misled.compare(order: 120, head: try #require(honest.tip?.head), from: Self.ana) == .diverges)
        #expect(misled.compare(order: 115, head: try #require(honest.head(atOrder: 115)), from: Self.cy) == .diverges)
        #expect(!misled.isVouched)

        // A snapshot that does not reach back to a run without a gap cannot start a chain.
        var gapped = OrderedChain()
        for record in records[100..<105] + records[106..<120] { _ = gapped.take(record) }
        #expect(gapped.takeSnapshotHead(try #require(honest.head(atOrder: 100)), atOrder: 100, writer: Self.ana) == .unknown)
        #expect(gapped.tip == nil)
        // Order 106 is missing: a head at 106 starts it over 107 onwards.
        #expect(gapped.takeSnapshotHead(try #require(honest.head(atOrder: 105)), atOrder: 105, writer: Self.ana) == .unknown)
        #expect(gapped.takeSnapshotHead(try #require(honest.head(atOrder: 106)), atOrder: 106, writer: Self.ana) == .anchored([]))
        #expect(gapped.tip?.head == honest.tip?.head)
    }

    @Test func aLiveParticipantComparesASnapshotsHeadWithItsOwn() throws {
        let records = Self.records(50)
        var chain = Self.chain(records)
        let own = try #require(chain.head(atOrder: 40))
        #expect(chain.takeSnapshotHead(own, atOrder: 40, writer: Self.ben) == .agrees)
        var forged = own
        forged[31] ^= 0x80
        #expect(chain.takeSnapshotHead(forged, atOrder: 40, writer: Self.ben) == .diverges)
        // The genesis start stays: a snapshot never replaces a chain that holds its order.
        #expect(chain.anchor == .genesis && chain.tip?.order == 50)
    }

    /// A live chain that misses orders stops at the last one it holds without a gap, and a
    /// later snapshot's head starts it again over the records past the gap.
    @Test func aGapStopsTheChainUntilASnapshotsHead() throws {
        let records = Self.records(80)
        let honest = Self.chain(records)
        var chain = OrderedChain()
        for record in records.prefix(30) + records[35..<80] { _ = chain.take(record) }
        #expect(chain.tip?.order == 30 && chain.tip?.head == honest.head(atOrder: 30))
        #expect(chain.compare(order: 30, head: try #require(honest.head(atOrder: 30)), from: Self.ben) == .agrees)
        #expect(chain.takeSnapshotHead(try #require(honest.head(atOrder: 40)), atOrder: 40, writer: Self.ben) == .anchored([]))
        #expect(chain.tip?.order == 80 && chain.tip?.head == honest.tip?.head)
        #expect(chain.head(atOrder: 39) == nil)
    }

    /// The session machine: a snapshot sealed by its writer carries the writer's head in front of
    /// its state; a late joiner whose history begins there chains from it and hands the
    /// coordinator the state alone, and a live participant that holds another head at that
    /// order says so at once.
    @Test func aSealedSnapshotCarriesItsWritersHeadThroughTheSessionMachine() throws {
        var group = MachineGroup()
        let host = group.member()
        let late = group.member()
        var history: [OrderedDelivery] = []
        for index in 1...6 { history.append(group.ordered(Array("change \(index)".utf8), by: host, retention: .playback)) }
        var hostChain = OrderedChain()
        for record in history { _ = hostChain.take(record) }
        let head = try #require(hostChain.head(atOrder: 6))
        let snapshot = group.ordered(SnapshotChainHead.wrap(Array("state".utf8), head: head), by: host, kind: .playbackSnapshot,
                                     retention: .snapshot(reflecting: 6))
        let next = group.ordered(Array("change 8".utf8), by: host, retention: .playback)
        _ = hostChain.take(snapshot)
        _ = hostChain.take(next)

        // The relay kept the snapshot and what follows it: the joiner chains from the head.
        var machine = group.machine(late, "late", initiated: false)
        let out = machine.onWelcome(try group.welcome([group.record(host, "host"), group.record(late, "late")], host: host,
                                                      history: [snapshot, next]), at: group.now)
        #expect(!out.contains { if case .chainDivergence = $0 { true } else { false } })
        #expect(machine.chain.anchor == .snapshot(order: 6, writer: host.localID))
        #expect(machine.chain.tip?.order == 8 && machine.chain.tip?.head == hostChain.tip?.head)
        let backlog = machine.onOrderedReader()
        let taken = try #require(backlog)
        #expect(taken.first?.body.plaintext == Array("state".utf8), "the coordinator gets the state without the head")

        // A live participant shown another record at order 3 holds another head at 6: the
        // snapshot's head tells it at once, naming the writer.
        var other = history
        other[2].body = host.seal(Array("another".utf8), kind: .playbackProposal, path: .ordered, retention: .playback)
        var live = group.machine(group.member(), "live", initiated: false)
        _ = live.onWelcome(try group.welcome([group.record(host, "host")], host: host, history: other), at: group.now)
        let found = live.onRelayEvent(.ordered(snapshot), at: group.now)
        #expect(found.contains { if case .chainDivergence(let divergence) = $0 { divergence == .init(participant: host.localID, order: 6) } else { false } })

        // A snapshot without a valid head prefix is malformed: a placeholder with its order.
        var plain = group.machine(group.member(), "plain", initiated: false)
        let bare = group.ordered([7, 7], by: host, kind: .playbackSnapshot, retention: .snapshot(reflecting: 8))
        _ = plain.onWelcome(try group.welcome([group.record(host, "host")], host: host, history: [bare]), at: group.now)
        #expect(plain.rejected[.malformed] == 1)
    }
}
