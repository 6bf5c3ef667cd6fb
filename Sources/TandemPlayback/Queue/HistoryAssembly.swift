import Foundation

/// A late joiner's history, as the relay delivers it, turned into what to apply, in order: the
/// newest valid snapshot that the kept records continue without a gap, then the records after
/// the order it reflects.
///
/// The relay keeps the two newest snapshots (and the newest of each of the last few publishers)
/// and drops the playback records at or below the lowest order they reflect, so a long
/// session's history looks like
/// `[M1+1 … S1 … M2+1 … S2 …]` (snapshot `Sn` reflecting order `Mn`), with records of other
/// kinds (activity, chat) kept by their own rules wherever they fall. The assembly tries the
/// snapshots newest first; one is taken when it reflects an order below its own, every order
/// after the one it reflects is there up to the end of the history, and the caller's check
/// (`isValid`, validating it like any proposal) accepts it. When none is, a history that starts
/// at order 1 without a gap needs no snapshot; otherwise it reports `.incomplete`.
///
/// Two ways to use it:
/// - whole: `HistoryAssembly.assemble(records, isValid:)` on a batch;
/// - incrementally, as the session delivers: `receive(_:)` each record (the history first,
///   buffered), `assemble(isValid:)` when the history ends, then `receive(_:)` passes each live
///   record straight through (`.apply`), dropping replays at or below what was assembled. When
///   the history is `.incomplete`, it keeps buffering what follows, so that calling
///   `assemble(isValid:)` again once a live snapshot arrives can still start from that one.
///   While incomplete, each call judges only the snapshots that arrived since the last one
///   (a refusal is final: orders never come back, and the check is the same), each checked
///   once and reported once, and the gap check costs the same however much is buffered: the
///   assembly keeps where the gap-free run of orders at the end of what it buffers starts.
///
/// A record that failed the session's checks is delivered as a placeholder (retention `.other`,
/// a payload that changes nothing), so that it counts as there: an invitee's unopenable records
/// make no gap. A missing order is a gap whatever it held, since the records do not say: so a snapshot must
/// reflect at least the order of the snapshot before it (a publisher publishes only once it has
/// seen the previous one come back, as `SnapshotSchedule` asks), or the relay's dropping of that
/// older snapshot leaves a gap the kept ones cannot be continued across.
///
/// A pure value: it decides from the records and the caller's check alone, the same on every
/// participant.
public struct HistoryAssembly<Payload: Sendable>: Sendable {
    /// How the relay keeps a record, as the ordered header says.
    public enum Retention: Sendable, Hashable, Codable {
        /// A playback record: dropped by the relay once a snapshot covers it.
        case playback
        /// A snapshot of the coordination state as of order `reflecting` (its own order is
        /// higher).
        case snapshot(reflecting: UInt64)
        /// Any other kind (activity, chat): kept by its own rules, never covered by a snapshot.
        case other
    }

    /// An ordered record as delivered.
    public struct Record: Sendable {
        /// Its place in the session's order.
        public var order: UInt64
        /// How the relay keeps it.
        public var retention: Retention
        /// What it carries (the caller's: a body, a decoded proposal).
        public var payload: Payload

        /// A record ordered `order`, kept as `retention`, carrying `payload`.
        public init(order: UInt64, retention: Retention, payload: Payload) {
            self.order = order
            self.retention = retention
            self.payload = payload
        }
    }

    /// One step of what to apply.
    public enum Instruction: Sendable {
        /// Adopt the state this snapshot carries: it reflects every record up to its
        /// `reflecting` order.
        case applySnapshot(Record)
        /// Apply this record as it came.
        case apply(Record)
    }

    /// What the assembled history starts from.
    public enum Basis: Sendable, Hashable {
        /// The snapshot ordered `order`, reflecting the records up to `reflecting`.
        case snapshot(order: UInt64, reflecting: UInt64)
        /// The whole history, from order 1 (or nothing at all).
        case fullHistory
    }

    /// Why a snapshot was not started from.
    public enum Refusal: Sendable, Hashable {
        /// It reflects an order that is not below its own.
        case malformed
        /// The kept records do not continue it: these orders after the one it reflects are
        /// missing.
        case gap(missing: ClosedRange<UInt64>)
        /// The caller's check refused it.
        case invalid
    }

    /// A snapshot that was not started from, and why.
    public struct SkippedSnapshot: Sendable, Hashable {
        /// Its order.
        public var order: UInt64
        /// The order it claims to reflect.
        public var reflecting: UInt64
        /// Why it was skipped.
        public var refusal: Refusal

        /// The snapshot ordered `order`, claiming to reflect `reflecting`, skipped for `refusal`.
        public init(order: UInt64, reflecting: UInt64, refusal: Refusal) {
            self.order = order
            self.reflecting = reflecting
            self.refusal = refusal
        }
    }

    /// An assembled history.
    public struct Plan: Sendable {
        /// What it starts from.
        public var basis: Basis
        /// What to apply, in order.
        public var instructions: [Instruction]
        /// The snapshots tried and skipped, newest first.
        public var skippedSnapshots: [SkippedSnapshot]
        /// The highest order the history held (0 for none): live records above it follow.
        public var lastOrder: UInt64

        /// A plan from `basis`: `instructions`, having skipped `skippedSnapshots`, up to
        /// `lastOrder`.
        public init(basis: Basis, instructions: [Instruction], skippedSnapshots: [SkippedSnapshot], lastOrder: UInt64) {
            self.basis = basis
            self.instructions = instructions
            self.skippedSnapshots = skippedSnapshots
            self.lastOrder = lastOrder
        }
    }

    /// What a history assembles to.
    public enum Outcome: Sendable {
        /// Apply the plan's instructions, in order.
        case assembled(Plan)
        /// No snapshot is usable and the history does not start at order 1: these orders are
        /// missing (the first gap counted from order 1), and these snapshots were skipped.
        case incomplete(missing: ClosedRange<UInt64>, skippedSnapshots: [SkippedSnapshot])
    }

    /// Where an incremental assembly stands.
    public enum Phase: Sendable, Hashable {
        /// Receiving the history, buffered.
        case history
        /// Assembled: live records above `lastOrder` pass straight through.
        case live(lastOrder: UInt64)
        /// Assembled to `.incomplete`: still buffering, waiting for a snapshot to start from.
        case incomplete
    }

    /// How many records an incomplete assembly buffers, by default, while it waits for a
    /// usable snapshot.
    public static var defaultMaximumBufferedRecords: Int { 65_536 }

    /// How many records an incomplete assembly buffers while it waits for a usable snapshot;
    /// beyond it the oldest are dropped (the snapshot it waits for would cover them). The
    /// history itself is bounded by what the relay keeps.
    public let maximumBufferedRecords: Int
    /// Where the assembly stands.
    public private(set) var phase = Phase.history
    /// The records buffered so far (the history, until it is assembled).
    public private(set) var buffered: [Record] = []
    /// While incomplete: the snapshots buffered since the last assembly, not yet judged.
    private var unjudged: [Record] = []
    /// While incomplete: the highest order buffered.
    private var lastBufferedOrder: UInt64 = 0
    /// While incomplete: every order from this one to `lastBufferedOrder` is buffered.
    private var runStart: UInt64 = 1
    /// While incomplete: the orders missing just below `runStart`, when known.
    private var missingBelowRun: ClosedRange<UInt64>?

    /// An assembly that expects the history first, buffering at most `maximumBufferedRecords`
    /// (at least 1) while incomplete.
    public init(maximumBufferedRecords: Int = defaultMaximumBufferedRecords) {
        self.maximumBufferedRecords = max(1, maximumBufferedRecords)
    }

    /// Takes the next delivered record and returns what to apply now: nothing while the history
    /// is buffered (or while incomplete), the record itself once live, and nothing for a replay
    /// at or below what was assembled.
    public mutating func receive(_ record: Record) -> [Instruction] {
        switch phase {
        case .history:
            buffered.append(record)
            return []
        case .incomplete:
            // In order from here on: a repeat at or below what is buffered is dropped, as the
            // whole assembly would count it once.
            guard record.order > lastBufferedOrder else { return [] }
            if record.order != lastBufferedOrder &+ 1 {
                missingBelowRun = (lastBufferedOrder + 1)...(record.order - 1)
                runStart = record.order
            }
            lastBufferedOrder = record.order
            buffered.append(record)
            if case .snapshot = record.retention { unjudged.append(record) }
            // Trimmed by an eighth at a time, so that a long wait costs no quadratic copying.
            if buffered.count > maximumBufferedRecords + maximumBufferedRecords / 8 {
                buffered.removeFirst(buffered.count - maximumBufferedRecords)
                if let first = buffered.first?.order, first > runStart {
                    runStart = first
                    missingBelowRun = nil
                }
            }
            return []
        case .live(let lastOrder):
            guard record.order > lastOrder else { return [] }
            phase = .live(lastOrder: record.order)
            return [.apply(record)]
        }
    }

    /// Assembles what was buffered (the history has ended, or, when incomplete, a snapshot came
    /// since) with `isValid` as the check of a snapshot's payload, and moves to the live phase
    /// when it assembles. Once live, it changes nothing and returns an empty plan (of basis
    /// `.fullHistory`, ending at the last order passed through).
    public mutating func assemble(isValid: (Payload) -> Bool) -> Outcome {
        switch phase {
        case .live(let lastOrder):
            return .assembled(Plan(basis: .fullHistory, instructions: [], skippedSnapshots: [], lastOrder: lastOrder))
        case .incomplete:
            return assembleIncomplete(isValid: isValid)
        case .history:
            let outcome = Self.assemble(buffered, isValid: isValid)
            switch outcome {
            case .assembled(let plan):
                phase = .live(lastOrder: plan.lastOrder)
                buffered = []
            case .incomplete(let missing, _):
                phase = .incomplete
                buffered = Self.ordered(buffered)
                lastBufferedOrder = buffered.last?.order ?? 0
                runStart = Self.runStart(of: buffered)
                missingBelowRun = runStart > 1 ? Self.missing(below: runStart, in: buffered) ?? missing : nil
            }
            return outcome
        }
    }

    /// Judges the snapshots buffered since the last call, newest first, each once: one is started
    /// from when it reflects an order below its own, every order after that one is buffered (at
    /// or after the start of the gap-free run at the end), and `isValid` accepts it.
    private mutating func assembleIncomplete(isValid: (Payload) -> Bool) -> Outcome {
        var skipped: [SkippedSnapshot] = []
        let candidates = unjudged.reversed()
        unjudged = []
        for snapshot in candidates {
            guard case .snapshot(let reflecting) = snapshot.retention else { continue }
            let gap: ClosedRange<UInt64>? = reflecting &+ 1 < runStart
                ? max(reflecting + 1, missingBelowRun?.lowerBound ?? reflecting + 1)...(runStart - 1) : nil
            if let refusal = Self.refusal(of: snapshot, reflecting: reflecting, gap: gap, isValid: isValid) {
                skipped.append(SkippedSnapshot(order: snapshot.order, reflecting: reflecting, refusal: refusal))
                continue
            }
            let plan = Plan(basis: .snapshot(order: snapshot.order, reflecting: reflecting),
                            instructions: Self.instructions(buffered, from: snapshot, reflecting: reflecting),
                            skippedSnapshots: skipped, lastOrder: lastBufferedOrder)
            phase = .live(lastOrder: lastBufferedOrder)
            buffered = []
            return .assembled(plan)
        }
        let missing = missingBelowRun ?? (1...max(1, runStart - 1))
        return .incomplete(missing: missing, skippedSnapshots: skipped)
    }

    /// Why `snapshot`, reflecting `reflecting`, cannot be started from (with `gap` the orders
    /// after it that are missing, if any), nil when it can: checked in that order, so that
    /// `isValid` is called only for one the records continue.
    private static func refusal(of snapshot: Record, reflecting: UInt64, gap: ClosedRange<UInt64>?,
                                isValid: (Payload) -> Bool) -> Refusal? {
        if reflecting >= snapshot.order { return .malformed }
        if let gap { return .gap(missing: gap) }
        return isValid(snapshot.payload) ? nil : .invalid
    }

    /// Where the gap-free run of orders at the end of `sorted` starts (1 for none).
    private static func runStart(of sorted: [Record]) -> UInt64 {
        guard var start = sorted.last?.order else { return 1 }
        for record in sorted.reversed().dropFirst() {
            guard record.order &+ 1 == start else { break }
            start = record.order
        }
        return start
    }

    /// The orders missing just below `start` in `sorted` (from the order after the one before
    /// it, or from 1), nil when none is.
    private static func missing(below start: UInt64, in sorted: [Record]) -> ClosedRange<UInt64>? {
        let before = sorted.last { $0.order < start }?.order ?? 0
        return before + 1 < start ? (before + 1)...(start - 1) : nil
    }

    /// Assembles a whole history, delivered as `records` (in order; a repeated order counts
    /// once, as first delivered), with `isValid` as the check of a snapshot's payload (called
    /// at most once a snapshot, newest first, only for one the records continue).
    public static func assemble(_ records: [Record], isValid: (Payload) -> Bool) -> Outcome {
        let sorted = ordered(records)
        let lastOrder = sorted.last?.order ?? 0
        var skipped: [SkippedSnapshot] = []
        let snapshots = sorted.reversed().compactMap { record -> (Record, UInt64)? in
            guard case .snapshot(let reflecting) = record.retention else { return nil }
            return (record, reflecting)
        }
        for (snapshot, reflecting) in snapshots {
            if let refusal = refusal(of: snapshot, reflecting: reflecting, gap: firstGap(in: sorted, after: reflecting), isValid: isValid) {
                skipped.append(SkippedSnapshot(order: snapshot.order, reflecting: reflecting, refusal: refusal))
                continue
            }
            return .assembled(Plan(basis: .snapshot(order: snapshot.order, reflecting: reflecting),
                                   instructions: instructions(sorted, from: snapshot, reflecting: reflecting),
                                   skippedSnapshots: skipped, lastOrder: lastOrder))
        }
        if let missing = firstGap(in: sorted, after: 0) {
            return .incomplete(missing: missing, skippedSnapshots: skipped)
        }
        let replay = sorted.compactMap { record -> Instruction? in
            if case .snapshot = record.retention { return nil }
            return .apply(record)
        }
        return .assembled(Plan(basis: .fullHistory, instructions: replay, skippedSnapshots: skipped, lastOrder: lastOrder))
    }

    /// `records` sorted by order, each order once (the first delivered); order 0 is none the
    /// relay gives, and is dropped.
    private static func ordered(_ records: [Record]) -> [Record] {
        var seen: Set<UInt64> = [0]
        let unique = records.filter { seen.insert($0.order).inserted }
        // Delivered in order already, as the relay sends them: the sort then costs one pass.
        if zip(unique, unique.dropFirst()).allSatisfy({ $0.order < $1.order }) { return unique }
        return unique.sorted { $0.order < $1.order }
    }

    /// The first orders missing after `after`, up to the last of `sorted`, or nil when every
    /// one is there.
    private static func firstGap(in sorted: [Record], after: UInt64) -> ClosedRange<UInt64>? {
        var expected = after &+ 1
        for record in sorted where record.order > after {
            if record.order != expected { return expected...(record.order - 1) }
            expected &+= 1
        }
        return nil
    }

    /// The snapshot's plan: the records of other kinds at or below the order it reflects (no
    /// snapshot covers those), the snapshot, then every record after that order but the other
    /// snapshots.
    private static func instructions(_ sorted: [Record], from snapshot: Record, reflecting: UInt64) -> [Instruction] {
        var before: [Instruction] = []
        var after: [Instruction] = []
        for record in sorted {
            switch record.retention {
            case .snapshot:
                continue
            case .other where record.order <= reflecting:
                before.append(.apply(record))
            case .playback where record.order <= reflecting:
                continue
            case .playback, .other:
                after.append(.apply(record))
            }
        }
        return before + [.applySnapshot(snapshot)] + after
    }
}

extension HistoryAssembly.Record: Equatable where Payload: Equatable {}
extension HistoryAssembly.Instruction: Equatable where Payload: Equatable {}
extension HistoryAssembly.Plan: Equatable where Payload: Equatable {}
extension HistoryAssembly.Outcome: Equatable where Payload: Equatable {}
extension HistoryAssembly: Equatable where Payload: Equatable {}
