import Foundation
import TandemClock

/// This participant's side of waiting together (the core decides for the group,
/// `CoordinationCore+Waiting.swift`):
///
/// - while the core's pre-roll gate waits for this participant, the play it orders is issued as
///   a seek (buffering in anticipation of playback) first, then the play at the gate's deadline;
///   once the player completes that seek, the machine proposes `.prerolled(version:)` for the
///   gate's play (`onCommandCompleted` returns it), and records that change nothing else do not
///   supersede the seek;
/// - when the core finds this participant's identity for the current item differs from the
///   group's, the machine begins a `.coordinatedPlaybackNotPossible` suspension of its own (which
///   never holds the group: the others play on) and ends it once the identities agree again.
extension CoordinatorMachine {
    /// The pre-roll report that completing `command` makes: a seek completed while the gate waits
    /// for this participant.
    func prerollReport(completing command: IssuedCommand?) -> PlaybackProposal? {
        guard let command, case .seek = command.command, let gate = core.waiting.gate,
              gate.pending.contains(localParticipant) else { return nil }
        return .prerolled(version: gate.version)
    }

    /// Whether a record that changed nothing but the version arrives while the player seeks for
    /// the gate: the seek goes on (re-issuing would lose the report).
    func keepsPrerollSeek(before: SharedTimeline, events: [CoordinationCore.Event]) -> Bool {
        guard events.isEmpty, core.awaitsPreroll(from: localParticipant), let flying = inFlight,
              case .seek = flying.command else { return false }
        var unchanged = before
        unchanged.version = core.timeline.version
        return unchanged == core.timeline
    }

    /// The timeline the player follows from: when a gate's play only moved to its start instant
    /// (the gate completed, or was withdrawn to a pause at the same media time), the player is
    /// where the play begins already (it pre-rolled there): no jump.
    func previous(_ before: SharedTimeline, gateWasOpen: Bool) -> SharedTimeline {
        let after = core.timeline
        guard gateWasOpen, before.item == after.item, before.anchorMediaTime == after.anchorMediaTime else { return before }
        return after
    }

    /// How far ahead the timeline is picked up if it is in force already: `prerolledLead` when a
    /// gate just started its play from where the player waits (it pre-rolled there) and the
    /// start passed no more than that lead ago; `prerollLead` otherwise.
    func leadAfter(gateWasOpen: Bool, from previous: SharedTimeline, now: HostInstant) -> TimeSpan {
        let timeline = core.timeline
        guard gateWasOpen, previous == timeline, timeline.rate > 0, !core.awaitsPreroll(from: localParticipant),
              let mapping else { return configuration.prerollLead }
        let late = mapping.sessionTime(atHost: now) - timeline.anchorSessionTime
        return late <= configuration.prerolledLead ? configuration.prerolledLead : configuration.prerollLead
    }

    /// Who the player's command names as the play's originator when `record` completed the open
    /// `gate` (a report, a departure, a suspension that does not hold, a mismatch: the play only
    /// moved to its start instant): the one who asked for the play, not whoever completed it.
    func playOriginator(completing gate: PrerollGate?, by record: OrderedProposal, before: SharedTimeline) -> UUID? {
        guard let gate, core.waiting.gate == nil else { return nil }
        switch record.proposal {
        case .prerolled, .departed, .state, .beginSuspension: break
        default: return nil
        }
        let after = core.timeline
        guard after.rate > 0, before.rate == after.rate, before.item == after.item, before.anchorMediaTime == after.anchorMediaTime,
              after.anchorSessionTime < before.anchorSessionTime else { return nil }
        return gate.originator
    }

    /// Begins or ends this participant's mismatch suspension as the core now sees it.
    mutating func mismatchDirectives(now: HostInstant) -> [OrderedDirective] {
        let mismatched = core.isMismatched(localParticipant)
        if mismatched, mismatchSuspension == nil {
            let id = UUID()
            mismatchSuspension = id
            return onSuspensionBegan(id, reason: .coordinatedPlaybackNotPossible, now: now).compactMap {
                if case .propose(let proposal) = $0 { OrderedDirective.propose(proposal) } else { nil }
            }
        }
        if !mismatched, let id = mismatchSuspension {
            mismatchSuspension = nil
            // The catch-up this returns is issued by the `follow` that comes after.
            return onSuspensionEnded(id, proposingNewTime: nil, now: now).compactMap {
                if case .propose(let proposal) = $0 { OrderedDirective.propose(proposal) } else { nil }
            }
        }
        return []
    }
}
