import Foundation
import TandemClock

/// Whether a play may take effect yet: it waits until every participant it expects has reported
/// that it pre-rolled for that play, or until a deadline, whichever comes first.
///
/// Opened for a play (the timeline version `version`, ordered at `orderedAt` and effective at
/// `effectiveAt`) with the participants expected to pre-roll: those present and not suspended,
/// as the caller computes them from the ordered stream. Each report is itself an ordered record
/// (with its own ordering and effective instants), so that the gate decides from ordered inputs
/// alone and every participant, fed the same records, gets the same start instant:
///
/// - complete (everyone expected reported, or stopped being waited for, in time): the play
///   starts at the latest effective instant among the play and the inputs that completed it (by
///   then every participant has received them), but never later than the deadline;
/// - otherwise: at the deadline, `orderedAt` plus the wait limit (1 s by default, and never
///   before `effectiveAt`), after which a slow participant catches up alone.
///
/// An input ordered at or after the start instant is late and changes nothing: by then the play
/// has taken effect everywhere. A participant who departs or suspends is no longer waited for
/// (`stopWaiting(for:orderedAt:effectiveAt:)`).
public struct PrerollGate: Sendable, Codable, Equatable {
    /// How long after its ordering instant a play waits at most for pre-roll reports: 1 s.
    public static let defaultWaitLimit = TimeSpan.seconds(1)

    /// Why an input changed nothing.
    public enum Ignored: Sendable, Equatable {
        /// It was ordered at or after the start instant: the play had taken effect.
        case late
        /// The report is for another play (another timeline version).
        case otherVersion
        /// The participant is not waited for (it joined after the play, suspended or departed).
        case notExpected
        /// The participant reported already; its first report counts.
        case alreadyReported
    }

    /// What an input did to the gate.
    public enum Update: Sendable, Equatable {
        /// It changed nothing, for this reason.
        case ignored(Ignored)
        /// It was recorded; the gate still waits for these participants (or the deadline).
        case waiting(for: Set<UUID>)
        /// It completed the gate: the play starts at this instant.
        case complete(startAt: SessionInstant)
    }

    /// The timeline version of the play this gate holds.
    public let version: UInt64
    /// Who asked for the play (nil when not given): once the gate completes, the play starts on
    /// their word, whoever's report completed it.
    public let originator: UUID?
    /// When the play was ordered (session time).
    public let orderedAt: SessionInstant
    /// When the play would take effect with no one to wait for.
    public let effectiveAt: SessionInstant
    /// When the play starts at the latest, whoever has not reported: `orderedAt` plus the wait
    /// limit, and never before `effectiveAt`.
    public let deadline: SessionInstant
    /// The participants the gate waits for, reported or not.
    public private(set) var expected: Set<UUID>
    /// The participants that reported, with their reports' effective instants (kept when one
    /// is no longer waited for).
    public private(set) var reports: [UUID: SessionInstant] = [:]
    /// The latest effective instant among the play and the inputs recorded so far.
    public private(set) var latestInput: SessionInstant

    /// A gate for the play `version` (asked for by `originator`), ordered at `orderedAt` and
    /// effective at `effectiveAt`, waiting for `expected` (present and not suspended) at most `waitLimit` after `orderedAt`.
    public init(version: UInt64, originator: UUID? = nil, orderedAt: SessionInstant, effectiveAt: SessionInstant,
                expected: some Sequence<UUID>, waitLimit: TimeSpan = defaultWaitLimit) {
        self.version = version
        self.originator = originator
        self.orderedAt = orderedAt
        self.effectiveAt = effectiveAt
        deadline = max(effectiveAt, orderedAt + max(.zero, waitLimit))
        self.expected = Set(expected)
        latestInput = effectiveAt
    }

    /// The expected participants that have not reported yet.
    public var pending: Set<UUID> { expected.filter { reports[$0] == nil } }

    /// Whether every expected participant has reported (or stopped being waited for).
    public var isComplete: Bool { expected.allSatisfy { reports[$0] != nil } }

    /// When the play takes effect, as the inputs so far decide: once complete, the latest
    /// effective instant among the play and the recorded inputs, at most the deadline; until
    /// then the deadline (an input can only bring it earlier, never later).
    public var startInstant: SessionInstant { isComplete ? min(latestInput, deadline) : deadline }

    /// Whether the play has taken effect at session instant `now`.
    public func hasStarted(at now: SessionInstant) -> Bool { now >= startInstant }

    /// Records that `participant` pre-rolled for the play `version`, by a report ordered at
    /// `orderedAt` (by default its effective instant) and effective at `effectiveAt`.
    @discardableResult
    public mutating func reportPrerolled(_ participant: UUID, version: UInt64, orderedAt: SessionInstant? = nil,
                                         effectiveAt: SessionInstant) -> Update {
        guard version == self.version else { return .ignored(.otherVersion) }
        guard (orderedAt ?? effectiveAt) < startInstant else { return .ignored(.late) }
        guard expected.contains(participant) else { return .ignored(.notExpected) }
        guard reports[participant] == nil else { return .ignored(.alreadyReported) }
        reports[participant] = effectiveAt
        return record(effectiveAt)
    }

    /// Stops waiting for `participant`, who departed or suspended by a record ordered at
    /// `orderedAt` (by default its effective instant) and effective at `effectiveAt`. A report
    /// it made before still counts toward the start instant.
    @discardableResult
    public mutating func stopWaiting(for participant: UUID, orderedAt: SessionInstant? = nil, effectiveAt: SessionInstant) -> Update {
        guard (orderedAt ?? effectiveAt) < startInstant else { return .ignored(.late) }
        guard expected.contains(participant) else { return .ignored(.notExpected) }
        expected.remove(participant)
        // Had it reported, the gate needs nothing more from it: its withdrawal completes nothing.
        return record(reports[participant] == nil ? effectiveAt : latestInput)
    }

    private mutating func record(_ effectiveAt: SessionInstant) -> Update {
        latestInput = max(latestInput, effectiveAt)
        return isComplete ? .complete(startAt: startInstant) : .waiting(for: pending)
    }
}
