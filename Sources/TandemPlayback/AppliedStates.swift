import Foundation
import TandemClock

/// The replicated states a live participant applied lately, each with the order from which it
/// held, so that a snapshot another participant publishes can be checked against what this one
/// applied up to the order the snapshot reflects. A pure value, part of `SnapshotProgress`.
///
/// A record that changes nothing but the version (a skipped one, a placeholder, a record of
/// another kind) adds no state: one state covers every order until the next change. Only the
/// newest `capacity` states are kept; a snapshot reflecting an order before the oldest cannot be
/// checked (`Verdict.unknown`).
struct AppliedStates: Sendable, Equatable {
    /// How many states are kept.
    static let capacity = 32

    /// What a snapshot is, against the states applied.
    enum Verdict: Sendable, Equatable {
        /// It is the state this participant applied up to the order it reflects.
        case matches
        /// It is not.
        case differs
        /// The order it reflects is not among those kept, or not yet applied.
        case unknown
    }

    private struct Entry: Sendable, Equatable {
        var from: UInt64
        var core: CoordinationCore
    }

    private var entries: [Entry] = []

    /// Notes the state `core` (at its version), unless it is the newest kept but for the version.
    mutating func note(_ core: CoordinationCore) {
        let version = core.timeline.version
        if let last = entries.last {
            guard version >= last.from else {
                // The state went back (coordinating anew): what was kept no longer applies.
                entries = [Entry(from: version, core: core)]
                return
            }
            if Self.same(last.core, core) { return }
        }
        entries.append(Entry(from: version, core: core))
        if entries.count > Self.capacity + Self.capacity / 4 { entries.removeFirst(entries.count - Self.capacity) }
    }

    /// Whether `snapshot`, reflecting `reflecting` and ordered at `orderedAt`, is the state noted
    /// for that order, with `current` the order applied last. A publisher may have published the
    /// state as it will be after an item's end due within `CoordinatorMachine.itemEndLead` of its
    /// tick: so both states are also compared settled at `orderedAt` plus that lead.
    func verdict(of snapshot: CoordinationCore, reflecting: UInt64, orderedAt: SessionInstant, current: UInt64) -> Verdict {
        guard reflecting <= current, let entry = entries.last(where: { $0.from <= reflecting }) else { return .unknown }
        var applied = entry.core
        applied.timeline.version = reflecting
        if Self.same(applied, snapshot) { return .matches }
        let horizon = orderedAt + CoordinatorMachine.itemEndLead
        return Self.same(applied.settled(at: horizon), snapshot.settled(at: horizon)) ? .matches : .differs
    }

    /// Whether `lhs` and `rhs` are the same state but for the version.
    private static func same(_ lhs: CoordinationCore, _ rhs: CoordinationCore) -> Bool {
        var rhs = rhs
        rhs.timeline.version = lhs.timeline.version
        return lhs == rhs
    }
}
