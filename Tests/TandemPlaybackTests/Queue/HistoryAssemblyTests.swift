import Foundation
import Testing
import TandemPlayback

/// A late joiner's history assembly: from the newest valid snapshot the kept records continue,
/// falling back to the older one, to the full history, or reporting it incomplete; whole or
/// record by record; and, against a simulated relay's retention, landing exactly where a
/// participant who was there from the start is.
@Suite struct HistoryAssemblyTests {
    /// What the records carry in these tests: a playback change, a snapshot of the state (valid
    /// or forged), or a chat line.
    enum Payload: Sendable, Equatable {
        case change(Int)
        case state(Int, valid: Bool)
        case chat(String)
    }

    typealias Assembly = HistoryAssembly<Payload>
    typealias Record = Assembly.Record

    static func change(_ order: UInt64) -> Record { Record(order: order, retention: .playback, payload: .change(Int(order))) }
    static func snapshot(_ order: UInt64, reflecting: UInt64, valid: Bool = true) -> Record {
        Record(order: order, retention: .snapshot(reflecting: reflecting), payload: .state(fold(upTo: reflecting), valid: valid))
    }
    static func chat(_ order: UInt64) -> Record { Record(order: order, retention: .other, payload: .chat("line \(order)")) }

    /// The state after the changes 1…`order` (each change `n` carries `n`), folded so that order
    /// matters: what a participant there from the start holds.
    static func fold(upTo order: UInt64) -> Int {
        order == 0 ? 0 : (1...order).reduce(0) { step($0, $1) }
    }
    static func step(_ state: Int, _ change: UInt64) -> Int { (state &* 31 &+ Int(change)) % 1_000_003 }

    static func isValid(_ payload: Payload) -> Bool {
        if case .state(_, let valid) = payload { return valid }
        return false
    }

    /// The orders of what to apply: `S25` for a snapshot, the order for a record.
    static func trace(_ outcome: Assembly.Outcome) -> [String] {
        guard case .assembled(let plan) = outcome else { return ["incomplete"] }
        return plan.instructions.map {
            switch $0 {
            case .applySnapshot(let record): "S\(record.order)"
            case .apply(let record): "\(record.order)"
            }
        }
    }

    static func orders(_ range: ClosedRange<UInt64>, except skipped: Set<UInt64> = []) -> [String] {
        range.filter { !skipped.contains($0) }.map { "\($0)" }
    }

    /// What the relay keeps of a session of records 1…30 with snapshots S15 (reflecting 10) and
    /// S25 (reflecting 20): the playback records after 10, both snapshots, and chat lines
    /// of 3 and 18.
    static func longSession(s15Valid: Bool = true, s25Valid: Bool = true) -> [Record] {
        [chat(3)] + (UInt64(11)...30).map { order in
            switch order {
            case 15: snapshot(15, reflecting: 10, valid: s15Valid)
            case 25: snapshot(25, reflecting: 20, valid: s25Valid)
            case 18: chat(18)
            default: change(order)
            }
        }
    }

    @Test func anEmptyHistoryAssemblesToNothingAndLiveRecordsPassStraightThrough() {
        var assembly = Assembly()
        #expect(assemble(&assembly)
                    == .assembled(Assembly.Plan(basis: .fullHistory, instructions: [], skippedSnapshots: [], lastOrder: 0)))
        #expect(assembly.phase == .live(lastOrder: 0))
        #expect(receive(&assembly, Self.change(1)) == [.apply(Self.change(1))])
        #expect(receive(&assembly, Self.change(1)).isEmpty)
        #expect(receive(&assembly, Self.chat(2)) == [.apply(Self.chat(2))])
    }

    @Test func aHistoryFromOrderOneNeedsNoSnapshot() {
        let records = (1...6).map { $0 == 4 ? Self.chat(4) : Self.change(UInt64($0)) }
        let outcome = Assembly.assemble(records, isValid: Self.isValid)
        #expect(Self.trace(outcome) == ["1", "2", "3", "4", "5", "6"])
        guard case .assembled(let plan) = outcome else { return }
        #expect(plan.basis == .fullHistory)
        #expect(plan.lastOrder == 6)
    }

    @Test func aLongSessionStartsFromTheNewestSnapshotAndTheRecordsAfterWhatItReflects() {
        let outcome = Assembly.assemble(Self.longSession(), isValid: Self.isValid)
        // The chat lines of 3 and 18 come first (no snapshot covers chat), then S25, then 21…30
        // but 25.
        #expect(Self.trace(outcome) == ["3", "18", "S25"] + Self.orders(21...30, except: [25]))
        guard case .assembled(let plan) = outcome else { return }
        #expect(plan.basis == .snapshot(order: 25, reflecting: 20))
        #expect(plan.skippedSnapshots.isEmpty)
        #expect(plan.lastOrder == 30)
    }

    @Test func anInvalidNewestSnapshotFallsBackToTheOlder() {
        let outcome = Assembly.assemble(Self.longSession(s25Valid: false), isValid: Self.isValid)
        #expect(Self.trace(outcome) == ["3", "S15"] + Self.orders(11...30, except: [15, 25]))
        guard case .assembled(let plan) = outcome else { return }
        #expect(plan.basis == .snapshot(order: 15, reflecting: 10))
        #expect(plan.skippedSnapshots == [Assembly.SkippedSnapshot(order: 25, reflecting: 20, refusal: .invalid)])
    }

    @Test func neitherSnapshotValidAndNoHistoryFromOneIsIncomplete() {
        let outcome = Assembly.assemble(Self.longSession(s15Valid: false, s25Valid: false), isValid: Self.isValid)
        #expect(outcome == .incomplete(missing: 1...2, skippedSnapshots: [
            Assembly.SkippedSnapshot(order: 25, reflecting: 20, refusal: .invalid),
            Assembly.SkippedSnapshot(order: 15, reflecting: 10, refusal: .invalid),
        ]))
    }

    @Test func neitherSnapshotValidButTheWholeHistoryKeptReplaysItAll() {
        let records = (1...10).map(Self.change) + [Self.snapshot(11, reflecting: 10, valid: false)] + (12...14).map(Self.change)
        let outcome = Assembly.assemble(records, isValid: Self.isValid)
        #expect(Self.trace(outcome) == Self.orders(1...14, except: [11]))
    }

    @Test func aValidSnapshotIsPreferredEvenWhenTheWholeHistoryIsKept() {
        let records = (1...10).map(Self.change) + [Self.snapshot(11, reflecting: 9)] + (12...13).map(Self.change)
        #expect(Self.trace(Assembly.assemble(records, isValid: Self.isValid)) == ["S11", "10", "12", "13"])
    }

    @Test func aGapAfterTheNewestSnapshotsReflectedOrderRulesOutBoth() {
        let records = Self.longSession().filter { $0.order != 27 }
        let outcome = Assembly.assemble(records, isValid: Self.isValid)
        #expect(outcome == .incomplete(missing: 1...2, skippedSnapshots: [
            Assembly.SkippedSnapshot(order: 25, reflecting: 20, refusal: .gap(missing: 27...27)),
            Assembly.SkippedSnapshot(order: 15, reflecting: 10, refusal: .gap(missing: 27...27)),
        ]))
    }

    @Test func aGapThatOnlyTheNewestSnapshotCoversIsFine() {
        let records = Self.longSession().filter { $0.order != 13 }
        #expect(Self.trace(Assembly.assemble(records, isValid: Self.isValid)) == ["3", "18", "S25"] + Self.orders(21...30, except: [25]))
        // Without it the older one does not do.
        let outcome = Assembly.assemble(records.map { $0.order == 25 ? Self.snapshot(25, reflecting: 20, valid: false) : $0 },
                                        isValid: Self.isValid)
        guard case .incomplete(let missing, let skipped) = outcome else {
            Issue.record("assembled \(outcome)")
            return
        }
        #expect(missing == 1...2)
        #expect(skipped.map(\.refusal) == [.invalid, .gap(missing: 13...13)])
    }

    @Test func aSnapshotReflectingItsOwnOrderOrLaterIsMalformedAndNotChecked() {
        var checked: [UInt64] = []
        let records = (1...4).map(Self.change) + [Self.snapshot(5, reflecting: 5), Self.snapshot(6, reflecting: 9)]
        let outcome = Assembly.assemble(records) { payload in
            if case .state(let state, _) = payload { checked.append(UInt64(state)) }
            return true
        }
        #expect(checked.isEmpty)
        #expect(Self.trace(outcome) == ["1", "2", "3", "4"])
        guard case .assembled(let plan) = outcome else { return }
        #expect(plan.skippedSnapshots.map(\.refusal) == [.malformed, .malformed])
        #expect(plan.lastOrder == 6)
    }

    @Test func theCheckRunsOnlyForSnapshotsTheRecordsContinueNewestFirstOnce() {
        var checks: [Payload] = []
        _ = Assembly.assemble(Self.longSession()) { checks.append($0); return Self.isValid($0) }
        #expect(checks == [.state(Self.fold(upTo: 20), valid: true)])
        checks = []
        _ = Assembly.assemble(Self.longSession(s25Valid: false)) { checks.append($0); return Self.isValid($0) }
        #expect(checks == [.state(Self.fold(upTo: 20), valid: false), .state(Self.fold(upTo: 10), valid: true)])
    }

    @Test func repeatedAndReorderedDeliveriesAssembleAlike() {
        let records = Self.longSession()
        var shuffled = Array(records.reversed()) + records.prefix(5)
        shuffled.append(Record(order: 0, retention: .playback, payload: .change(-1)))
        #expect(Assembly.assemble(shuffled, isValid: Self.isValid) == Assembly.assemble(records, isValid: Self.isValid))
    }

    @Test func recordByRecordItAssemblesAsTheWholeThenPassesLiveRecordsThrough() {
        var assembly = Assembly()
        for record in Self.longSession() { #expect(receive(&assembly, record).isEmpty) }
        #expect(assembly.phase == .history)
        #expect(assemble(&assembly) == Assembly.assemble(Self.longSession(), isValid: Self.isValid))
        #expect(assembly.phase == .live(lastOrder: 30))
        #expect(assembly.buffered.isEmpty)
        #expect(receive(&assembly, Self.change(30)).isEmpty)
        #expect(receive(&assembly, Self.change(29)).isEmpty)
        #expect(receive(&assembly, Self.change(31)) == [.apply(Self.change(31))])
        #expect(receive(&assembly, Self.snapshot(32, reflecting: 31)) == [.apply(Self.snapshot(32, reflecting: 31))])
        #expect(assembly.phase == .live(lastOrder: 32))
        // Assembling again once live changes nothing.
        #expect(assemble(&assembly)
                    == .assembled(Assembly.Plan(basis: .fullHistory, instructions: [], skippedSnapshots: [], lastOrder: 32)))
    }

    @Test func anIncompleteAssemblyWaitsForALiveSnapshotToStartFrom() {
        var assembly = Assembly()
        for record in Self.longSession(s15Valid: false, s25Valid: false) { _ = receive(&assembly, record) }
        guard case .incomplete = assemble(&assembly) else {
            Issue.record("assembled an incomplete history")
            return
        }
        #expect(assembly.phase == .incomplete)
        for record in [Self.change(31), Self.change(32), Self.snapshot(33, reflecting: 32), Self.change(34)] {
            #expect(receive(&assembly, record).isEmpty)
        }
        let outcome = assemble(&assembly)
        #expect(Self.trace(outcome) == ["3", "18", "S33", "34"])
        #expect(assembly.phase == .live(lastOrder: 34))
        #expect(receive(&assembly, Self.change(35)) == [.apply(Self.change(35))])
    }

    @Test func anIncompleteAssemblyBuffersBoundedly() {
        var assembly = Assembly(maximumBufferedRecords: 100)
        _ = receive(&assembly, Self.change(5))
        guard case .incomplete = assemble(&assembly) else {
            Issue.record("assembled a history that starts at 5")
            return
        }
        for order in UInt64(6)...1_000 { _ = receive(&assembly, Self.change(order)) }
        #expect(assembly.buffered.count <= 100 + 100 / 8)
        #expect(assembly.buffered.last?.order == 1_000)
        _ = receive(&assembly, Self.snapshot(1_001, reflecting: 990))
        #expect(Self.trace(assemble(&assembly)) == ["S1001"] + Self.orders(991...1_000))
    }

    /// A seeded session of changes, chat and snapshots (some forged, some lagging behind their
    /// own order, none behind the previous snapshot's), kept as the relay keeps it: the two newest snapshots, and the playback records
    /// after the older one's reflected order. A joiner at every tenth record lands on the state
    /// of a participant who was there from the start, unless neither kept snapshot is valid and
    /// the history was cut, which it reports.
    @Test(arguments: [UInt64(11), 12, 13, 14])
    func aJoinerLandsWhereEveryoneElseIs(seed: UInt64) {
        var random = QueueTestRandom(seed: seed)
        var session: [Record] = []
        var state = 0
        var states: [UInt64: Int] = [0: 0]
        var landed = 0
        var reported = 0
        var lastSnapshot: UInt64 = 0
        for order in UInt64(1)...600 {
            let roll = random.next() % 100
            if roll < 8, order > 1 {
                // A snapshot lags a little behind its own order, but a publisher publishes only
                // once it has seen the previous snapshot come back: it reflects that one's order.
                let lag = min(order - 1, random.next() % 4)
                let reflecting = max(lastSnapshot, order - 1 - lag)
                lastSnapshot = order
                session.append(Record(order: order, retention: .snapshot(reflecting: reflecting),
                                      payload: .state(states[reflecting] ?? -1, valid: random.next() % 4 != 0)))
            } else if roll < 15 {
                session.append(Self.chat(order))
            } else {
                state = Self.step(state, order)
                session.append(Self.change(order))
            }
            states[order] = state
            guard order % 10 == 0 else { continue }

            let kept = Self.retained(session)
            switch Assembly.assemble(kept, isValid: Self.isValid) {
            case .assembled(let plan):
                var joiner = 0
                for instruction in plan.instructions {
                    switch instruction {
                    case .applySnapshot(let record):
                        guard case .state(let snapshotState, _) = record.payload else { continue }
                        joiner = snapshotState
                    case .apply(let record):
                        if case .change = record.payload { joiner = Self.step(joiner, record.order) }
                    }
                }
                #expect(joiner == state, "joining at \(order) (\(plan.basis))")
                landed += 1
            case .incomplete(_, let skipped):
                let newest = kept.filter { if case .snapshot = $0.retention { true } else { false } }
                #expect(newest.allSatisfy { !Self.isValid($0.payload) }, "incomplete at \(order) with a valid snapshot: \(skipped)")
                // The relay dropped records, or the whole history would have done.
                #expect(kept.count < Int(order))
                reported += 1
            }
        }
        #expect(landed > reported)
    }

    /// What the relay keeps of `session`: the two newest snapshots, every chat line, and the
    /// playback records after the older kept snapshot's reflected order (with one, after its).
    static func retained(_ session: [Record]) -> [Record] {
        let snapshots = session.compactMap { record -> (UInt64, UInt64)? in
            guard case .snapshot(let reflecting) = record.retention else { return nil }
            return (record.order, reflecting)
        }.suffix(2)
        let keptSnapshots = Set(snapshots.map(\.0))
        let floor = snapshots.first?.1 ?? 0
        return session.filter { record in
            switch record.retention {
            case .snapshot: keptSnapshots.contains(record.order)
            case .playback: record.order > floor
            case .other: true
            }
        }
    }
}

/// Hands `record` to `assembly` (`#expect` cannot call a mutating method itself).
private func receive(_ assembly: inout HistoryAssembly<HistoryAssemblyTests.Payload>,
                     _ record: HistoryAssembly<HistoryAssemblyTests.Payload>.Record) -> [HistoryAssembly<HistoryAssemblyTests.Payload>.Instruction] {
    assembly.receive(record)
}

/// Assembles what `assembly` buffered, with the tests' check of a snapshot.
private func assemble(_ assembly: inout HistoryAssembly<HistoryAssemblyTests.Payload>) -> HistoryAssembly<HistoryAssemblyTests.Payload>.Outcome {
    assembly.assemble(isValid: HistoryAssemblyTests.isValid)
}
