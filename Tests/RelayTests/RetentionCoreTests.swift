import Foundation
import TandemNet
import TandemWire
import Testing

/// The relay keeps a session's ordered history by each record's retention, in the pure core on
/// virtual time: the two newest snapshots, the playback records they do not cover, kept records
/// by the caps; what it holds stays bounded however long the session runs.
@Suite("Relay core retention")
struct RetentionCoreTests {
    private let key = [UInt8](repeating: 3, count: 32)
    private let session = UUID()

    private var admission: CoreAdmission { CoreAdmission(key: key, session: session) }

    /// The session with one participant on connection 1, created at instant 0.
    private func started(_ configuration: RelayCoreConfiguration = RelayCoreConfiguration()) -> RelayCore {
        admission.startedCore(configuration)
    }

    /// A joiner's welcome and the history entries that follow it.
    private func join(_ core: inout RelayCore, on connection: RelayConnectionID, at now: Int64) throws
        -> (welcome: RelayWelcomeFrame, history: [RelayOrderedEntry]) {
        let joined = admission.historyOnJoin(&core, on: connection, at: now)
        guard let welcome = joined.welcome else { throw RetentionTestError.notWelcomed("\(joined.frames)") }
        return (welcome, joined.history)
    }

    /// Proposes from connection 1; returns the relay's sequence of the ordered frame sent back.
    @discardableResult
    private func propose(_ core: inout RelayCore, _ sequence: UInt64, _ retention: OrderedRetention, _ body: [UInt8],
                         at now: Int64, from connection: RelayConnectionID = RelayConnectionID(1)) -> UInt64? {
        let directives = core.onFrame(.proposal(sequence: sequence, retention: retention, body: body),
                                      from: connection, at: now)
        return CoreAdmission.frames(directives, to: connection).compactMap {
            if case let .ordered(relaySequence, _) = $0 { relaySequence } else { nil }
        }.last
    }

    @Test("two snapshots kept, playback records at or below the older one's reflected order dropped, kept records kept")
    func rule() throws {
        var core = started()
        let one = RelayConnectionID(1)
        let base = core.accountedBytes
        var sequence: UInt64 = 0
        func next() -> UInt64 { sequence += 1; return sequence }
        // Order 1: an activity record; 2–5 playback; 6 a snapshot of the state after 4 (5 came in between).
        propose(&core, next(), .kept, [1], at: 1)
        for order in 2...5 { propose(&core, next(), .playback, [UInt8(order)], at: Int64(order)) }
        propose(&core, next(), .snapshot(reflecting: 4), [6, 6], at: 6)
        #expect(core.orderedHistoryCount(of: session) == 3, "one snapshot: the playback records it covers are gone, never past it")
        #expect(core.orderedHistoryBytes(of: session) == 1 + 1 + 2, "orders 1, 5 and 6")

        // 7, 8 playback; 9 a snapshot of 7: the older snapshot (of 4) still bounds what is dropped.
        propose(&core, next(), .playback, [7], at: 8)
        propose(&core, next(), .playback, [8], at: 9)
        propose(&core, next(), .snapshot(reflecting: 7), [9, 9, 9], at: 10)
        #expect(core.orderedHistoryCount(of: session) == 6)

        // 10 playback; 11 a snapshot of 9: the first snapshot goes, and so do playback records up to 7.
        propose(&core, next(), .playback, [10], at: 11)
        propose(&core, next(), .snapshot(reflecting: 9), [11], at: 12)
        let last = propose(&core, next(), .kept, [12], at: 13)
        // The budget counts exactly the bodies kept once the proposer's outbox is acknowledged.
        _ = core.onFrame(.ack(try #require(last)), from: one, at: 14)
        #expect(core.orderedHistoryBytes(of: session) == 1 + 1 + 3 + 1 + 1 + 1)
        #expect(core.accountedBytes == base + core.orderedHistoryBytes(of: session))

        let (welcome, history) = try join(&core, on: RelayConnectionID(2), at: 15)
        #expect(history.map(\.order) == [1, 8, 9, 10, 11, 12])
        #expect(history.map(\.retention) == [.kept, .playback, .snapshot(reflecting: 7), .playback,
                                              .snapshot(reflecting: 9), .kept])
        #expect(history.map(\.body) == [[1], [8], [9, 9, 9], [10], [11], [12]])
        #expect(welcome.orderedHistoryCount == 6)
    }

    @Test("snapshots published at once after a burst: those after what the older kept one reflects stay, so its history has no gap")
    func snapshotsInARow() throws {
        var core = started()
        var sequence: UInt64 = 0
        func next() -> UInt64 { sequence += 1; return sequence }
        // 1–10 playback; 11 a snapshot of 5; 12–20 playback; then five snapshots in a row, as
        // several participants publish once a burst is over: of 14, 15, 16, 17, and of 18 (its
        // publisher behind the others).
        for order in 1...10 { propose(&core, next(), .playback, [UInt8(order)], at: Int64(order)) }
        propose(&core, next(), .snapshot(reflecting: 5), [11], at: 11)
        for order in 12...20 { propose(&core, next(), .playback, [UInt8(order)], at: Int64(order)) }
        for reflecting: UInt64 in [14, 15, 16, 17, 18] { propose(&core, next(), .snapshot(reflecting: reflecting), [0], at: 30) }
        let (_, history) = try join(&core, on: RelayConnectionID(2), at: 40)
        // Orders 21–25 are the five snapshots: the newest two reflect 17 and 18, so a joiner needs
        // every order after 17 (18–24) besides them; 21–23 stay, 11 (of 5) goes.
        #expect(history.map(\.order) == [18, 19, 20, 21, 22, 23, 24, 25], "\(history.map(\.order))")
        let orders = history.map(\.order)
        #expect(zip(orders, orders.dropFirst()).allSatisfy { $1 == $0 + 1 }, "no gap after what the older kept snapshot reflects")
        // A snapshot of 25 (order 26) moves on: the older kept one is now 25's (of 18), which
        // needs 19–25; then one of 26 (order 27): 26's (of 25) is the older kept, and the rest go.
        propose(&core, next(), .snapshot(reflecting: 25), [0], at: 50)
        let (_, later) = try join(&core, on: RelayConnectionID(3), at: 60)
        #expect(later.map(\.order) == Array(19...26), "\(later.map(\.order))")
        propose(&core, next(), .snapshot(reflecting: 26), [0], at: 70)
        let (_, last) = try join(&core, on: RelayConnectionID(4), at: 80)
        #expect(last.map(\.order) == [26, 27], "\(last.map(\.order))")
    }

    @Test("the newer of the two kept snapshots reflects an order before the older's: its history has no gap either")
    func newerSnapshotReflectingLess() throws {
        var core = started()
        var sequence: UInt64 = 0
        func next() -> UInt64 { sequence += 1; return sequence }
        // 1–4 playback; 5 a snapshot of 3; 6–10 playback; 11 a snapshot of 8; 12 a snapshot of
        // 6, its publisher behind (a long session's bench saw a joiner skip such a newest
        // snapshot for the gap after it, and restore from the older).
        for order in 1...4 { propose(&core, next(), .playback, [UInt8(order)], at: Int64(order)) }
        propose(&core, next(), .snapshot(reflecting: 3), [5], at: 5)
        for order in 6...10 { propose(&core, next(), .playback, [UInt8(order)], at: Int64(order)) }
        propose(&core, next(), .snapshot(reflecting: 8), [11], at: 11)
        propose(&core, next(), .snapshot(reflecting: 6), [12], at: 12)
        let (_, history) = try join(&core, on: RelayConnectionID(2), at: 20)
        // Either snapshot restores: every order after 6 is there.
        #expect(history.map(\.order) == Array(7...12), "\(history.map(\.order))")
        // A third, of 12: the two newest reflect 6 and 12, so 7–10 stay; a fourth, of 13, lets them go.
        propose(&core, next(), .snapshot(reflecting: 12), [13], at: 30)
        let (_, later) = try join(&core, on: RelayConnectionID(3), at: 40)
        #expect(later.map(\.order) == Array(7...13), "\(later.map(\.order))")
        propose(&core, next(), .snapshot(reflecting: 13), [14], at: 50)
        let (_, last) = try join(&core, on: RelayConnectionID(4), at: 60)
        #expect(last.map(\.order) == [13, 14], "\(last.map(\.order))")
    }

    /// An invitee publishes two bogus snapshots in a row (the relay reads no body, so it cannot
    /// tell): the honest publisher's newest snapshot stays, with every order after what it
    /// reflects, so that a joiner who refuses the bogus ones still restores from it.
    @Test("two bogus snapshots in a row from one publisher leave the honest publisher's newest kept, with its history")
    func bogusSnapshotsInARowFromOnePublisher() throws {
        var core = started()
        let invitee = RelayConnectionID(2)
        _ = admission.admit(&core, invitee, TestIdentities.make(), create: false, at: 0)
        // 1–5 playback; 6 the honest snapshot of 5; 7–9 playback; 10 and 11 the invitee's
        // snapshots, of 9 and of 10.
        for order in UInt64(1)...5 { propose(&core, order, .playback, [UInt8(order)], at: Int64(order)) }
        propose(&core, 6, .snapshot(reflecting: 5), [6], at: 6)
        for order in UInt64(7)...9 { propose(&core, order, .playback, [UInt8(order)], at: Int64(order)) }
        propose(&core, 1, .snapshot(reflecting: 9), [0xBA, 0xD1], at: 10, from: invitee)
        propose(&core, 2, .snapshot(reflecting: 10), [0xBA, 0xD2], at: 11, from: invitee)
        let history = try join(&core, on: RelayConnectionID(3), at: 12).history
        #expect(history.map(\.order) == Array(6...11), "\(history.map(\.order))")
        #expect(history.first?.retention == .snapshot(reflecting: 5))
        #expect(history.first?.body == [6])

        // More bogus ones change nothing for the honest one; its next snapshot replaces it.
        for sequence in UInt64(3)...6 {
            propose(&core, sequence, .snapshot(reflecting: 8 + sequence), [0xBA], at: 20 + Int64(sequence), from: invitee)
        }
        #expect(try join(&core, on: RelayConnectionID(4), at: 30).history.map(\.order) == Array(6...15))
        propose(&core, 10, .snapshot(reflecting: 15), [16], at: 31)
        let later = try join(&core, on: RelayConnectionID(5), at: 32).history
        #expect(later.map(\.order) == [15, 16], "the invitee's newest (15, of 14) and the honest one's (16, of 15)")
    }

    /// Each publisher's newest snapshot is a fallback only for the last few publishers: a fifth
    /// publisher's snapshot lets the oldest publisher's go.
    @Test("the newest snapshots of at most four publishers are kept as fallbacks")
    func publishersBounded() throws {
        var core = started()
        let others = (2...5).map { RelayConnectionID(UInt64($0)) }
        for connection in others { _ = admission.admit(&core, connection, TestIdentities.make(), create: false, at: 0) }
        // 1–3 playback; 4 a snapshot of 3 from connection 1; then one snapshot from each other
        // connection, each of the order before it.
        for order in UInt64(1)...3 { propose(&core, order, .playback, [UInt8(order)], at: Int64(order)) }
        propose(&core, 4, .snapshot(reflecting: 3), [4], at: 4)
        for (index, connection) in others.prefix(3).enumerated() {
            propose(&core, 1, .snapshot(reflecting: UInt64(4 + index)), [0], at: Int64(5 + index), from: connection)
        }
        #expect(try join(&core, on: RelayConnectionID(9), at: 10).history.map(\.order) == Array(4...7))
        // The fifth publisher: the first one's snapshot (4) is no longer a fallback.
        propose(&core, 1, .snapshot(reflecting: 7), [0], at: 11, from: others[3])
        #expect(try join(&core, on: RelayConnectionID(10), at: 12).history.map(\.order) == Array(5...8))
    }

    @Test("a snapshot that does not reflect an order below its own: the proposer is dropped, nothing is ordered or kept")
    func snapshotPastItself() throws {
        var core = started()
        let two = RelayConnectionID(2)
        let bob = TestIdentities.make()
        _ = CoreAdmission(key: key, session: session).admit(&core, two, bob, create: false, at: 0)
        propose(&core, 1, .playback, [1], at: 1)
        for reflecting: UInt64 in [2, 3, .max] {
            var fresh = core
            let directives = fresh.onFrame(.proposal(sequence: 2, retention: .snapshot(reflecting: reflecting), body: [2]),
                                           from: RelayConnectionID(1), at: 2)
            let sent = CoreAdmission.frames(directives, to: RelayConnectionID(1))
            #expect(sent.first == .error(RelayFault(.protocolViolation, "a snapshot at order 2 cannot reflect order \(reflecting)")))
            #expect(directives.contains { if case .close(RelayConnectionID(1)) = $0 { true } else { false } })
            #expect(!CoreAdmission.frames(directives, to: two).contains { if case .ordered = $0 { true } else { false } },
                    "nothing ordered")
            #expect(fresh.orderedHistoryCount(of: session) == 1)
            #expect(fresh.orderedHistoryBytes(of: session) == 1)
            // Bob, who stays, proposes next: his record is order 2.
            let next = fresh.onFrame(.proposal(sequence: 1, retention: .snapshot(reflecting: 1), body: [3]), from: two, at: 3)
            let ordered = CoreAdmission.frames(next, to: two).compactMap { if case let .ordered(_, entry) = $0 { entry } else { nil } }
            #expect(ordered.map(\.order) == [2])
        }
    }

    @Test("the caps stay a safety net over every retention, the oldest dropped first")
    func capsOverEverything() throws {
        var configuration = RelayCoreConfiguration()
        configuration.maximumOrderedHistory = 4
        configuration.maximumOrderedHistoryBytes = 1_000
        var core = started(configuration)
        propose(&core, 1, .snapshot(reflecting: 0), [1], at: 1)
        for sequence in UInt64(2)...6 { propose(&core, sequence, .kept, [UInt8(sequence)], at: Int64(sequence)) }
        var history = try join(&core, on: RelayConnectionID(2), at: 7).history
        #expect(history.map(\.order) == [3, 4, 5, 6], "the snapshot was the oldest")
        _ = core.onClose(RelayConnectionID(2), at: 7)
        propose(&core, 7, .playback, [UInt8](repeating: 7, count: 998), at: 8)
        history = try join(&core, on: RelayConnectionID(3), at: 9).history
        #expect(history.map(\.order) == [5, 6, 7], "four records are too many, then 998 + 1 + 1 + 1 bytes too many")
        #expect(core.orderedHistoryBytes(of: session) == 1_000)
    }

    /// A burst that outruns the snapshots reaches the cap with two snapshots kept: the older one
    /// goes whole, with the records only it needed, rather than its history losing its oldest
    /// record and leaving a fallback with a gap; the newest keeps its whole history.
    @Test("over the cap the older snapshot goes with the records only it needs, never leaving a fallback with a gap")
    func capDropsTheFallbackWhole() throws {
        var configuration = RelayCoreConfiguration()
        configuration.maximumOrderedHistory = 6
        var core = started(configuration)
        // 1–3 playback, 4 a snapshot of 1; 5–6 playback, 7 a snapshot of 5: kept 2–7, six records.
        for order in UInt64(1)...3 { propose(&core, order, .playback, [UInt8(order)], at: Int64(order)) }
        propose(&core, 4, .snapshot(reflecting: 1), [4, 4], at: 4)
        for order in UInt64(5)...6 { propose(&core, order, .playback, [UInt8(order)], at: Int64(order)) }
        propose(&core, 7, .snapshot(reflecting: 5), [7, 7, 7], at: 7)
        #expect(core.orderedHistoryCount(of: session) == 6)

        // 8 is one too many. Dropping the oldest (2) would leave the snapshot of 1 without the
        // record after it; instead that snapshot goes, and 2, 3 and 5, which only it needed.
        propose(&core, 8, .playback, [8], at: 8)
        let history = try join(&core, on: RelayConnectionID(2), at: 9).history
        #expect(history.map(\.order) == [6, 7, 8])
        #expect(history.map(\.retention) == [.playback, .snapshot(reflecting: 5), .playback])
        #expect(core.orderedHistoryBytes(of: session) == 1 + 3 + 1)
        _ = core.onClose(RelayConnectionID(2), at: 9)

        // Past the cap with one snapshot left, the oldest records go, as before.
        for order in UInt64(9)...12 { propose(&core, order, .playback, [UInt8(order)], at: Int64(order)) }
        let later = try join(&core, on: RelayConnectionID(3), at: 13).history
        #expect(later.map(\.order) == [7, 8, 9, 10, 11, 12])
    }

    /// 100,000 playback proposals of 100 bytes, a snapshot of 2,000 bytes after every 1,000 that
    /// reflects the last but three (three more were ordered before it, as a publisher's can be),
    /// and an activity record every 10,000: what the relay keeps stays bounded throughout, and a
    /// joiner gets exactly what follows the older snapshot's reflected order, the kept records
    /// before it, and both snapshots.
    @Test("100,000 playback proposals with a snapshot every 1,000: the history stays bounded")
    func longSession() throws {
        var core = started()
        let one = RelayConnectionID(1)
        let base = core.accountedBytes
        let playbackBody = [UInt8](repeating: 0xAB, count: 100)
        let snapshotBody = [UInt8](repeating: 0x5A, count: 2_000)
        var sequence: UInt64 = 0
        var now: Int64 = 0
        var order: UInt64 = 0
        var pendingSnapshot: (due: Int, reflecting: UInt64)?
        var keptOrders: [UInt64] = []
        var snapshots: [(order: UInt64, reflecting: UInt64)] = []
        var largestCount = 0
        var largestBytes = 0
        var relaySequence: UInt64 = 0
        func submit(_ retention: OrderedRetention, _ body: [UInt8]) {
            sequence += 1
            now += 100_000  // 10,000 proposals a second, within the flood control's rate.
            order += 1
            if let acknowledged = propose(&core, sequence, retention, body, at: now) { relaySequence = acknowledged }
            if sequence.isMultiple(of: 1_000) { _ = core.onFrame(.ack(relaySequence), from: one, at: now) }
            largestCount = max(largestCount, core.orderedHistoryCount(of: session))
            largestBytes = max(largestBytes, core.orderedHistoryBytes(of: session))
        }
        for proposal in 1...100_000 {
            submit(.playback, playbackBody)
            if proposal.isMultiple(of: 1_000) { pendingSnapshot = (proposal + 3, order) }
            if let pending = pendingSnapshot, pending.due == proposal {
                submit(.snapshot(reflecting: pending.reflecting), snapshotBody)
                snapshots.append((order, pending.reflecting))
                pendingSnapshot = nil
            }
            if proposal.isMultiple(of: 10_000) {
                submit(.kept, [1, 2, 3])
                keptOrders.append(order)
            }
        }
        _ = core.onFrame(.ack(relaySequence), from: one, at: now)
        #expect(snapshots.count == 99, "the 100th is not due yet")

        // Bounded all along: two snapshots, at most 2,000 + 3 playback records between them, the kept ones.
        #expect(largestCount <= 2 + 2_003 + 10, "\(largestCount)")
        #expect(largestBytes <= 2 * 2_000 + 2_003 * 100 + 10 * 3, "\(largestBytes)")

        let bytes = core.orderedHistoryBytes(of: session)
        #expect(core.accountedBytes == base + bytes, "the budget counts the history exactly, the outbox acknowledged")

        let (welcome, history) = try join(&core, on: RelayConnectionID(2), at: now + 1)
        let older = snapshots[snapshots.count - 2]
        let newer = snapshots[snapshots.count - 1]
        let expected = keptOrders.filter { $0 <= older.reflecting } + Array((older.reflecting + 1)...order)
        #expect(history.map(\.order) == expected)
        #expect(welcome.orderedHistoryCount == expected.count)
        #expect(history.filter { $0.retention.reflectedOrder != nil }.map(\.order) == [older.order, newer.order])
        #expect(history.filter { $0.retention == .kept }.count == 10)
        #expect(bytes == history.reduce(0) { $0 + $1.body.count })
        print("retention: after 100,000 playback proposals the session keeps \(history.count) records, \(bytes) bytes of bodies (largest along the way: \(largestCount) records, \(largestBytes) bytes)")
    }
}

private enum RetentionTestError: Error {
    case notWelcomed(String)
}
