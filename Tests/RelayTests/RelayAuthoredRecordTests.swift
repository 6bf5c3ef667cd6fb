import Foundation
@testable import TandemNet
import TandemWire
import Testing

/// Role records handed to the relay with their maker's statement (`authoredProposal`), on
/// virtual time: the relay takes the statement at the record's order, with nobody else present;
/// it keeps the records whose statement it took apart from the history's caps, so that a flood
/// of kept records does not push them out of a late joiner's history, under bounds of their own;
/// it mirrors a reinstatement; and the epoch goes past the one byte it once was.
@Suite("Relay authored role records")
struct RelayAuthoredRecordTests {
    private let fixture = CoreAdmission(key: [UInt8](repeating: 7, count: 32), session: UUID())

    /// A core with `count` participants, the first the creator, each on the connection of its
    /// number (1, 2, …), keeping at most `history` records under the caps.
    private func party(_ count: Int, history: Int = 4096) -> (RelayCore, [UUID]) {
        var configuration = RelayCoreConfiguration()
        configuration.maximumOrderedHistory = history
        var core = RelayCore(configuration: configuration)
        let ids = (0..<count).map { _ in TestIdentities.make() }
        for (index, id) in ids.enumerated() {
            _ = fixture.admit(&core, RelayConnectionID(UInt64(index + 1)), id, create: index == 0, at: 0)
        }
        return (core, ids)
    }

    /// Numbers each connection's frames.
    private final class Sequences {
        var last: [UInt64: UInt64] = [:]
        func next(_ connection: UInt64) -> UInt64 {
            last[connection, default: 0] += 1
            return last[connection]!
        }
    }

    /// A role record `body` with `change` signed by `signer` under `counter`, sent on `connection`.
    @discardableResult
    private func author(_ core: inout RelayCore, _ body: [UInt8], _ change: RelayAuthority.Change, by signer: UUID, counter: UInt64,
                        on connection: UInt64, _ sequences: Sequences, at now: Int64 = 1) -> [RelayDirective] {
        let statement = RelayAuthority.signed(change, session: fixture.session, counter: counter, by: TestIdentities.key(of: signer))
        return core.onFrame(.authoredProposal(sequence: sequences.next(connection), statement: statement, body: body),
                            from: RelayConnectionID(connection), at: now)
    }

    /// A plain kept record from `connection`.
    private func propose(_ core: inout RelayCore, _ body: [UInt8], on connection: UInt64, _ sequences: Sequences, at now: Int64 = 1) {
        _ = core.onFrame(.proposal(sequence: sequences.next(connection), retention: .kept, body: body), from: RelayConnectionID(connection), at: now)
    }

    /// Whether a fresh joiner holding `admission`'s secret is welcomed.
    private func admits(_ admission: CoreAdmission, _ core: inout RelayCore, connection: UInt64, at now: Int64 = 2) -> Bool {
        let id = RelayConnectionID(connection)
        if case .welcome? = CoreAdmission.frames(admission.admit(&core, id, TestIdentities.make(), create: false, at: now), to: id).first {
            return true
        }
        return false
    }

    private func epoch(_ seed: UInt8) -> CoreAdmission {
        CoreAdmission(key: [UInt8](repeating: seed, count: 32), session: fixture.session)
    }

    @Test("an operator's change made with nobody else present reaches the relay with its record: it admits by the new epoch at once")
    func aChangeWithNoWitness() {
        var (core, ids) = party(1)
        let sequences = Sequences()
        let next = epoch(41)
        let directives = author(&core, [0x00, 0x52, 7], .epoch(1, verifier: next.sessionKey.publicKey, removed: nil), by: ids[0],
                                counter: 1, on: 1, sequences)
        #expect(CoreAdmission.frames(directives, to: RelayConnectionID(1)).contains { if case .ordered = $0 { true } else { false } },
                "the record is ordered as any other")
        #expect(core.sessions[fixture.session]?.epoch == 1)
        #expect(admits(next, &core, connection: 10))
        #expect(!admits(fixture, &core, connection: 11), "the older invite stops admitting")
        // The same statement handed on later, by a late joiner replaying the history, is refused
        // by its counter: the relay already took it.
        #expect(core.authorityRefusal(RelayAuthority.signed(.epoch(1, verifier: next.sessionKey.publicKey, removed: nil), session: fixture.session,
                                                            counter: 1, by: TestIdentities.key(of: ids[0])),
                                      in: core.sessions[fixture.session]!) == "a statement seen before")
    }

    @Test("role records whose statement the relay took outlast a flood of kept records; a guest's is no role record and goes with the flood")
    func roleRecordsOutlastAFlood() {
        var (core, ids) = party(2, history: 16)
        let (ana, ben) = (ids[0], ids[1])
        let sequences = Sequences()
        let bensKey = TestIdentities.key(of: ben).publicKey
        // Ana grants Ben the role and sets the policy; Ben then rekeys and hands on the older
        // keys. A record whose statement the relay refuses (a policy signed by a key that is no
        // operator's) stays an ordinary kept record.
        author(&core, [0x00, 0x52, 1], .grant(publicKey: bensKey), by: ana, counter: 1, on: 1, sequences)
        author(&core, [0x00, 0x52, 3], .ending(operatorsOnly: true), by: ana, counter: 2, on: 1, sequences)
        let stranger = TestIdentities.make()
        author(&core, [0x00, 0x52, 99], .ending(operatorsOnly: false), by: stranger, counter: 1, on: 2, sequences)
        author(&core, [0x00, 0x52, 7], .epoch(1, verifier: epoch(42).sessionKey.publicKey, removed: nil), by: ben, counter: 3, on: 2, sequences)
        author(&core, [0x00, 0x52, 8], .epochHistory, by: ben, counter: 4, on: 2, sequences)
        #expect(core.pinnedHistoryCount(of: fixture.session) == 4)
        #expect(core.sessions[fixture.session]?.endingByOperators == true, "the stranger's statement changed nothing")

        // Ben floods the history with kept records, far past its cap.
        for index in 0..<200 { propose(&core, [UInt8(truncatingIfNeeded: index), 0xFF], on: 2, sequences) }
        #expect(core.orderedHistoryCount(of: fixture.session) == 16 + 4, "the caps bound the rest; the role records come on top")

        // A late joiner (with the new epoch's secret) replays the four role records, in order,
        // then the newest of the flood; the stranger's record went with the flood.
        let joined = epoch(42).historyOnJoin(&core, on: RelayConnectionID(20), at: 2)
        let bodies = joined.history.map(\.body)
        #expect(Array(bodies.prefix(4)) == [[0x00, 0x52, 1], [0x00, 0x52, 3], [0x00, 0x52, 7], [0x00, 0x52, 8]])
        #expect(!bodies.contains([0x00, 0x52, 99]))
        #expect(bodies.count == 20 && bodies.last == [199, 0xFF])
        #expect(joined.welcome?.orderedHistoryCount == 20)
        #expect(joined.history.map(\.order) == joined.history.map(\.order).sorted())
    }

    @Test("a statement whose signature does not verify drops its sender and orders nothing")
    func aForgedStatementOrdersNothing() {
        var (core, ids) = party(2)
        let sequences = Sequences()
        var forged = RelayAuthority.signed(.grant(publicKey: TestIdentities.key(of: ids[1]).publicKey), session: fixture.session, counter: 1,
                                           by: TestIdentities.key(of: ids[1]))
        forged.signer = TestIdentities.key(of: ids[0]).publicKey
        let directives = core.onFrame(.authoredProposal(sequence: sequences.next(2), statement: forged, body: [0x00, 0x52, 1]),
                                      from: RelayConnectionID(2), at: 1)
        #expect(CoreAdmission.frames(directives, to: RelayConnectionID(2)).contains {
            if case let .error(fault) = $0 { fault.code == .protocolViolation } else { false }
        })
        #expect(core.orderedHistoryCount(of: fixture.session) == 0)
        #expect(core.participants(of: fixture.session) == [ids[0]])
    }

    @Test("the pinned records are bounded on their own: past the count, the oldest goes")
    func pinnedRecordsAreBounded() {
        var history = RelayOrderedHistory()
        let sender = UUID()
        func entry(_ order: UInt64, bytes: Int = 4) -> RelayOrderedEntry {
            RelayOrderedEntry(sender: sender, order: order, orderedAt: 0, effectiveAt: 0, retention: .kept, body: [UInt8](repeating: 1, count: bytes))
        }
        let limit = RelayOrderedHistory.maximumPinnedCount
        for order in 1...UInt64(limit + 3) { history.append(entry(order), pinned: true, maximumCount: 2, maximumBytes: 1 << 20) }
        #expect(history.pinnedCount == limit)
        #expect(history.all.first?.order == 4)
        #expect(history.bodyBytes == 4 * limit && history.pinnedBytes == 4 * limit)
        // The caps do not count the pinned: two kept records stay beside them.
        for order in UInt64(limit + 4)...UInt64(limit + 9) { history.append(entry(order), maximumCount: 2, maximumBytes: 1 << 20) }
        #expect(history.count == limit + 2)
        // By bytes: records of 1 MiB each, past the lane's bytes.
        var large = RelayOrderedHistory()
        let perRecord = 1 << 20
        let fits = RelayOrderedHistory.maximumPinnedBytes / perRecord
        for order in 1...UInt64(fits + 2) { large.append(entry(order, bytes: perRecord), pinned: true, maximumCount: 2, maximumBytes: 1) }
        #expect(large.pinnedCount == fits && large.all.first?.order == 3)
    }

    @Test("the relay mirrors a reinstatement: the operator a claim displaced takes the role back and the claimant loses it")
    func reinstatement() {
        var (core, ids) = party(3)
        let (ana, ben, cy) = (ids[0], ids[1], ids[2])
        let sequences = Sequences()
        propose(&core, [1], on: 2, sequences)
        propose(&core, [2], on: 3, sequences)
        // Ana's connection is lost past the grace period, as the relay sees it; Ben, present
        // longest, claims.
        _ = core.onFrame(.leave(sequence: sequences.next(1)), from: RelayConnectionID(1), at: 1)
        author(&core, [0x00, 0x52, 4], .claim, by: ben, counter: 1, on: 2, sequences)
        let anasKey = TestIdentities.key(of: ana).publicKey
        #expect(core.sessions[fixture.session]?.operatorKeys == [TestIdentities.key(of: ben).publicKey])
        #expect(core.sessions[fixture.session]?.displacedKeys == [anasKey])

        // Ana comes back under the same identity. Cy, whom no claim displaced, cannot reinstate.
        _ = fixture.admit(&core, RelayConnectionID(4), ana, create: false, at: 2)
        author(&core, [0x00, 0x52, 5], .reinstate, by: cy, counter: 1, on: 3, sequences, at: 2)
        #expect(core.sessions[fixture.session]?.operatorIDs == [ben])
        author(&core, [0x00, 0x52, 5], .reinstate, by: ana, counter: 5, on: 4, sequences, at: 2)
        #expect(core.sessions[fixture.session]?.operatorIDs == [ana])
        #expect(core.sessions[fixture.session]?.displacedKeys == [] && core.sessions[fixture.session]?.claimantKey == nil)
        #expect(core.pinnedHistoryCount(of: fixture.session) == 2, "the claim and the reinstatement; Cy's refused one is not pinned")
        // So Ben's moves are refused and Ana's taken, as the participants hold.
        let next = epoch(43)
        author(&core, [0x00, 0x52, 7], .epoch(1, verifier: next.sessionKey.publicKey, removed: nil), by: ben, counter: 2, on: 2, sequences, at: 2)
        #expect(core.sessions[fixture.session]?.epoch == 0)
        author(&core, [0x00, 0x52, 7], .epoch(1, verifier: next.sessionKey.publicKey, removed: ben), by: ana, counter: 6, on: 4, sequences, at: 2)
        #expect(core.sessions[fixture.session]?.epoch == 1 && core.participants(of: fixture.session) == [cy, ana])
        // A second reinstatement has nothing to take back.
        #expect(core.authorityRefusal(RelayAuthority.signed(.reinstate, session: fixture.session, counter: 9, by: TestIdentities.key(of: ana)),
                                      in: core.sessions[fixture.session]!) != nil)
    }

    @Test("the epoch passes the one byte it once was: the 256th change and after admit by their verifiers")
    func pastTheOldEpochLimit() throws {
        var (core, ids) = party(1)
        let sequences = Sequences()
        for number in 1...UInt16(255) {
            let verifier = [UInt8(truncatingIfNeeded: number >> 8), UInt8(truncatingIfNeeded: number)] + [UInt8](repeating: 9, count: 30)
            _ = core.onFrame(.authority(sequence: sequences.next(1), RelayAuthority.signed(
                .epoch(number, verifier: verifier, removed: nil), session: fixture.session, counter: UInt64(number), by: TestIdentities.key(of: ids[0]))),
                from: RelayConnectionID(1), at: 1)
        }
        #expect(core.sessions[fixture.session]?.epoch == 255)
        let next = epoch(44)
        author(&core, [0x00, 0x52, 7], .epoch(256, verifier: next.sessionKey.publicKey, removed: nil), by: ids[0], counter: 256, on: 1, sequences)
        #expect(core.sessions[fixture.session]?.epoch == 256)
        #expect(admits(next, &core, connection: 10))
        // On to 1,100: the relay keeps the newest 1,024 earlier verifiers, and a snapshot of the
        // session reads back with them.
        for number in UInt16(257)...1100 {
            let verifier = [UInt8(truncatingIfNeeded: number >> 8), UInt8(truncatingIfNeeded: number)] + [UInt8](repeating: 9, count: 30)
            _ = core.onFrame(.authority(sequence: sequences.next(1), RelayAuthority.signed(
                .epoch(number, verifier: verifier, removed: nil), session: fixture.session, counter: UInt64(number), by: TestIdentities.key(of: ids[0]))),
                from: RelayConnectionID(1), at: 1)
        }
        let state = try #require(core.sessions[fixture.session])
        #expect(state.epoch == 1100 && state.formerKeys.count == RelayCore.maximumFormerKeys)
        #expect(state.formerKeys.first?.prefix(2) == [0, 76], "the oldest kept is epoch 76's: 1,100 − 1,024")
        let decoded = try ClusterSessionSnapshot.decode(ClusterSessionSnapshot.encode(state, homes: [:]), session: fixture.session).state
        #expect(decoded.epoch == 1100 && decoded.formerKeys == state.formerKeys)

        // A statement says so in two bytes, and reads back.
        let statement = RelayAuthority.signed(.epoch(300, verifier: next.sessionKey.publicKey, removed: nil), session: fixture.session, counter: 1,
                                              by: TestIdentities.key(of: ids[0]))
        var writer = ByteWriter(capacity: 0)
        statement.write(into: &writer)
        var reader = ByteReader(writer.bytes[...], context: "test")
        #expect(try RelayAuthority.read(from: &reader) == statement)
    }
}
