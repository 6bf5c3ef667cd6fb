import Foundation
import TandemClock

/// Whether a participant's stall holds the group: one that stalls more than `limit` times within
/// `window` (three a minute, by default) stops holding it, and catches up alone, until its stalls
/// thin out again.
///
/// Fed the session instants at which the ordered stream says each participant's stall
/// suspensions began (their ordering instants), so that every participant decides alike. It
/// keeps, per participant, only the last `limit` instants within the window, and forgets a
/// participant whose stalls all fell out of it (`forget(before:)`, or on its next stall), so what
/// it holds is bounded by the participants that stalled lately.
public struct StallPolicy: Sendable, Codable, Equatable {
    /// How many stalls a participant may begin within `window` and still hold the group: 3.
    public static let defaultLimit = 3
    /// The sliding window stalls are counted in: a minute.
    public static let defaultWindow = TimeSpan.seconds(60)

    /// How many stalls within the window still hold the group.
    public let limit: Int
    /// How far back stalls are counted: a stall at `s` counts at `t` while `t - s < window`.
    public let window: TimeSpan
    /// Each participant's latest stall instants within the window, oldest first.
    public private(set) var stalls: [UUID: [SessionInstant]] = [:]

    /// A policy that lets `limit` stalls (at least 0) within `window` hold the group.
    public init(limit: Int = defaultLimit, window: TimeSpan = defaultWindow) {
        self.limit = max(0, limit)
        self.window = max(.zero, window)
    }

    /// Whether a stall that `participant` began at `instant` would hold the group: whether fewer
    /// than `limit` of its stalls began within the window before it.
    public func holdsGroup(for participant: UUID, at instant: SessionInstant) -> Bool {
        recent(stalls[participant] ?? [], at: instant).count < limit
    }

    /// Records that `participant` began a stall suspension at `instant` and returns whether it
    /// holds the group (as `holdsGroup(for:at:)` said before it).
    ///
    /// Instants come in order from the ordered stream. One that does not is placed where it
    /// belongs; decisions stay a function of the sequence of records, the same everywhere.
    @discardableResult
    public mutating func recordStall(of participant: UUID, at instant: SessionInstant) -> Bool {
        let holds = holdsGroup(for: participant, at: instant)
        let start = instant - window
        var kept = (stalls[participant] ?? []).filter { $0 > start }
        kept.insert(instant, at: kept.firstIndex { $0 > instant } ?? kept.endIndex)
        // Only whether `limit` of them are within the window matters, and the newest tell it.
        if kept.count > limit { kept.removeFirst(kept.count - limit) }
        stalls[participant] = kept.isEmpty ? nil : kept
        return holds
    }

    /// How many of `participant`'s stalls began within the window ending at `instant` (at most
    /// `limit`, the most it keeps).
    public func recentStalls(of participant: UUID, at instant: SessionInstant) -> Int {
        recent(stalls[participant] ?? [], at: instant).count
    }

    /// Forgets `participant` (it departed).
    public mutating func forget(_ participant: UUID) {
        stalls.removeValue(forKey: participant)
    }

    /// Forgets every stall that fell out of the window ending at `instant`, and the participants
    /// left with none.
    public mutating func forget(before instant: SessionInstant) {
        let start = instant - window
        for (participant, instants) in stalls {
            let kept = instants.filter { $0 > start }
            stalls[participant] = kept.isEmpty ? nil : kept
        }
    }

    /// The instants of `instants` within the window ending at `instant`: after `instant - window`,
    /// and not after `instant` itself.
    private func recent(_ instants: [SessionInstant], at instant: SessionInstant) -> [SessionInstant] {
        let start = instant - window
        return instants.filter { $0 > start && $0 <= instant }
    }
}
