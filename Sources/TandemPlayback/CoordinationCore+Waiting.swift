import Foundation
import TandemClock

/// Waiting together, decided from ordered records alone so that every participant agrees: the
/// pre-roll gate of a play, the stall policy, and whose content identity is the group's.
///
/// - **Pre-roll gate.** A play (a `setRate` from a stopped timeline, a `seek` or an
///   `endSuspension` with a proposed time while the group plays, a resume after waiting) waits
///   for every *expected* participant to report `.prerolled(version:)` for it, at most
///   `PrerollGate.defaultWaitLimit` (1 s) after it was ordered. Expected: the participants that
///   reported `.state` and have not departed, less those holding a suspension and those whose
///   identity differs from the group's. When no one is expected but the originator (a group of
///   one), there is no gate: the play takes effect at once. While the gate is open, the timeline
///   is anchored at the gate's deadline (the play is ordered to start there); when the last
///   report completes it, the anchor moves to the gate's start instant (the latest effective
///   instant among the play and its reports). `setRateImmediately` / `seekImmediately` (Apple's
///   `playImmediately` / `resumeImmediately`) never open one. A timeline change, or a
///   suspension that holds the group, withdraws an open gate (the play had not begun: the
///   timeline is paused at its anchor from the play's effective instant).
/// - **Stall policy.** A `.stallRecovery` suspension holds the group only while its originator
///   began at most `StallPolicy.defaultLimit` of them in the last minute (by ordering instants).
/// - **The group's identity.** For each item, the first content identity reported for it is the
///   group's; a participant on that item with another identity is mismatched: its suspensions
///   never hold the group (whatever its waiting reasons), it is not waited for, and its machine
///   suspends itself with `.coordinatedPlaybackNotPossible`.
extension CoordinationCore {
    /// The core's waiting state: the open pre-roll gate, the stall policy, the group's identities.
    public struct Waiting: Sendable, Codable, Equatable {
        /// The gate of the play that has not taken effect yet, if any.
        public internal(set) var gate: PrerollGate?
        /// Each participant's recent stalls.
        public internal(set) var stalls = StallPolicy()
        /// Item identifier → the first content identity reported for it (the group's). Kept only
        /// for the current item and the items participants have loaded.
        public internal(set) var groupIdentities: [String: String] = [:]
        /// The group's cap on every suspension's hold (`PlaybackProposal.maximumHold`), or nil
        /// for the reasons' defaults alone (`CoordinationCore+Holds.swift`).
        public internal(set) var maximumHold: TimeSpan?
        /// No gate, no stalls, no identities.
        public init() {}
    }

    /// The participants a play opened now would wait for: those that reported state, less the
    /// suspended and the mismatched.
    public var prerollExpected: Set<UUID> {
        Set(participants.keys.filter { participant in
            !suspensions.contains { $0.participant == participant } && !isMismatched(participant)
        })
    }

    /// Whether `participant` has the current item loaded with an identity other than the group's
    /// (the first one reported for it).
    public func isMismatched(_ participant: UUID) -> Bool {
        guard let item = timeline.item, let state = participants[participant], state.item == item,
              let identity = state.identity, let group = waiting.groupIdentities[item] else { return false }
        return identity != group
    }

    /// Whether the gate of an open play still waits for `participant`'s pre-roll report.
    public func awaitsPreroll(from participant: UUID) -> Bool {
        waiting.gate?.pending.contains(participant) ?? false
    }

    /// Closes the gate of a play that has started by the time `ordered` was ordered.
    mutating func prepareWaiting(for ordered: OrderedProposal) {
        if let gate = waiting.gate, gate.hasStarted(at: ordered.orderedAt) { waiting.gate = nil }
        switch ordered.proposal {
        case .setRate, .setRateImmediately, .pause, .seek, .seekImmediately, .transition, .queue: withdrawGate()
        case .beginSuspension, .endSuspension, .state, .departed, .prerolled, .pauseSnapping, .maximumHold: break
        }
    }

    /// Opens a gate for the play `ordered` just made (the timeline playing from `at`), unless the
    /// timeline is stopped or no one but the originator is expected.
    mutating func gatePlay(_ ordered: OrderedProposal, at: SessionInstant) {
        waiting.gate = nil
        guard waitsForPreroll, timeline.rate > 0 else { return }
        let expected = prerollExpected
        guard !expected.isSubset(of: [ordered.originator]) else { return }
        let gate = PrerollGate(version: ordered.order, originator: ordered.originator, orderedAt: ordered.orderedAt, effectiveAt: at,
                               expected: expected)
        waiting.gate = gate
        timeline.anchorSessionTime = gate.deadline
    }

    /// Withdraws an open gate: its play had not begun, so the timeline is paused at its anchor
    /// from the play's effective instant.
    mutating func withdrawGate() {
        guard let gate = waiting.gate else { return }
        waiting.gate = nil
        timeline.anchorSessionTime = gate.effectiveAt
        timeline.rate = 0
    }

    /// Records `ordered`'s pre-roll report for the play `version`.
    mutating func reportPrerolled(_ ordered: OrderedProposal, version: UInt64) -> [Event] {
        guard var gate = waiting.gate else { return [] }
        let update = gate.reportPrerolled(ordered.originator, version: version, orderedAt: ordered.orderedAt,
                                          effectiveAt: ordered.effectiveAt)
        waiting.gate = gate
        return settle(update, ordered)
    }

    /// Stops waiting for `participant` (it departed, suspended without holding, or mismatched).
    mutating func stopWaiting(for participant: UUID, _ ordered: OrderedProposal) -> [Event] {
        guard var gate = waiting.gate else { return [] }
        let update = gate.stopWaiting(for: participant, orderedAt: ordered.orderedAt, effectiveAt: ordered.effectiveAt)
        waiting.gate = gate
        return settle(update, ordered)
    }

    /// A completed gate: the play starts at its start instant.
    private mutating func settle(_ update: PrerollGate.Update, _ ordered: OrderedProposal) -> [Event] {
        guard case .complete(let start) = update else { return [] }
        waiting.gate = nil
        timeline.anchorSessionTime = start
        return [changed(ordered)]
    }

    /// Whether a suspension `ordered` begins holds the group: as asked, unless its originator
    /// stalls too often (`.stallRecovery`) or is mismatched.
    mutating func holdsGroup(_ ordered: OrderedProposal, reason: SuspensionReason, asked: Bool) -> Bool {
        var holds = asked && holdLimit(for: reason) > .zero
        if reason == .stallRecovery {
            holds = waiting.stalls.recordStall(of: ordered.originator, at: ordered.orderedAt) && holds
        }
        return holds && !isMismatched(ordered.originator)
    }

    /// Records `identity` as the group's for `item` if it is the first reported for it.
    mutating func recordGroupIdentity(item: String?, identity: String?) {
        if let item, let identity, waiting.groupIdentities[item] == nil { waiting.groupIdentities[item] = identity }
        pruneGroupIdentities()
    }

    /// Forgets the identities of items neither the timeline nor any participant holds.
    mutating func pruneGroupIdentities() {
        let held = Set(participants.values.compactMap(\.item) + [timeline.item].compactMap { $0 })
        waiting.groupIdentities = waiting.groupIdentities.filter { held.contains($0.key) }
    }

    /// The mismatched participants' suspensions stop holding the group, and the gate stops
    /// waiting for them; the group resumes if they were all it waited for.
    mutating func releaseMismatched(_ ordered: OrderedProposal) -> [Event] {
        pruneGroupIdentities()
        var events: [Event] = []
        for participant in participants.keys.sorted(by: { $0.uuidString < $1.uuidString }) where isMismatched(participant) {
            events += stopWaiting(for: participant, ordered)
        }
        let wasWaiting = isWaiting
        for index in suspensions.indices where suspensions[index].holdsGroup && isMismatched(suspensions[index].participant) {
            suspensions[index].holdsGroup = false
        }
        guard wasWaiting, !isWaiting else { return events }
        let at = max(ordered.effectiveAt, timeline.anchorSessionTime)
        reanchor(media: timeline.mediaTime(atSessionTime: at), at: at)
        gatePlay(ordered, at: at)
        return events + [.groupResumed(timeline, originator: ordered.originator)]
    }
}
