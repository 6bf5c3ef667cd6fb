import Foundation
import TandemClock

/// Waiting has limits: a suspension holds the group for at most its hold limit, the shorter of
/// its reason's `SuspensionReason.defaultHoldLimit` and the group's `Waiting.maximumHold`
/// (a `.maximumHold` record sets it; nil leaves the defaults). The limit runs on the session
/// timeline from the instant the suspension began holding the group (its `began`: the begin
/// record's effective instant, or the timeline's anchor if that is later). At the limit's
/// instant the suspension stops holding the group, as `.setRateImmediately` releases holding
/// suspensions: it stays, its participant's player is still its own, and it comes in when it
/// ends it; if nothing else holds the group, the group plays on from where it waited, at that
/// instant. A `.holdExpired` event names it.
///
/// The release is part of the rules, applied by every core at the same point of the ordered
/// stream (`settle(at:)`, as an item's end is: before each record, for the limits due by its
/// effective instant), and at the same session instant, computed from ordered instants only.
/// No participant proposes it. A proposed release would take effect at whatever instant the first
/// participant's timer fired plus its ordering, a moment that depends on whose clock runs
/// ahead (each participant's estimate of session time differs by its error) and on who is there
/// to propose it; every participant would have to issue its player the resume only once the
/// record came back, late by a round trip. Applied by rule, the release instant is known to
/// everyone from the begin record on: each machine wakes a pre-roll ahead of it and issues its
/// player the play for that very instant, so the group comes in together whatever each clock's
/// error, as it does at an item's end, and a late joiner replaying the history reaches the same
/// state without anyone's timer having fired.
extension CoordinationCore {
    /// The longest cap a `.maximumHold` record may set: an hour.
    public static let maximumHoldCap = TimeSpan.seconds(3_600)

    /// The longest a suspension of `reason` holds the group: its reason's default, or the
    /// group's `maximumHold` if that is shorter.
    public func holdLimit(for reason: SuspensionReason) -> TimeSpan {
        guard let cap = waiting.maximumHold else { return reason.defaultHoldLimit }
        return min(reason.defaultHoldLimit, cap)
    }

    /// The session instant at which `suspension` stops holding the group, or nil when it does
    /// not hold it (or began holding it in a snapshot that did not say when).
    public func holdExpiry(of suspension: Suspension) -> SessionInstant? {
        guard suspension.holdsGroup, let began = suspension.began else { return nil }
        return began + holdLimit(for: suspension.reason)
    }

    /// The earliest instant at which a suspension stops holding the group, if any holds it.
    public var nextHoldExpiry: SessionInstant? { suspensions.compactMap { holdExpiry(of: $0) }.min() }

    /// Why `cap` cannot be the group's `maximumHold`, or nil when it can: 0 to `maximumHoldCap`
    /// (0: no suspension holds the group at all), or nil.
    static func maximumHoldRejection(_ cap: TimeSpan?) -> ProposalRejection? {
        guard let cap, !(TimeSpan.zero...maximumHoldCap).contains(cap) else { return nil }
        return ProposalRejection(.waitingLimitOutOfRange, "a maximum hold of \(cap) is not within 0…\(maximumHoldCap)")
    }

    /// Releases the holds whose limit is due at or before `instant`, earliest first (in the
    /// order the suspensions began when two are due together), with one `.holdExpired` event
    /// each. The group resumes at the instant of the release that leaves nothing holding it.
    /// Bounded by the number of suspensions.
    mutating func releaseExpiredHolds(at instant: SessionInstant) -> [Event] {
        var events: [Event] = []
        for _ in suspensions.indices {
            let due = suspensions.indices.compactMap { index in holdExpiry(of: suspensions[index]).map { (index, $0) } }
                .filter { $0.1 <= instant }
            guard let (index, expiry) = due.min(by: { $0.1 < $1.1 || ($0.1 == $1.1 && $0.0 < $1.0) }) else { break }
            let wasWaiting = isWaiting
            suspensions[index].holdsGroup = false
            if wasWaiting, !isWaiting {
                let at = max(expiry, timeline.anchorSessionTime)
                reanchor(media: timeline.mediaTime(atSessionTime: at), at: at)
            }
            let suspension = suspensions[index]
            events.append(.holdExpired(timeline, suspension: suspension, limit: holdLimit(for: suspension.reason), stillWaiting: isWaiting))
        }
        return events
    }

    /// A `.maximumHold` record: the group's cap from now on; holds it cuts short expire at once
    /// (at the record's instant `at`).
    mutating func setMaximumHold(_ cap: TimeSpan?, _ ordered: OrderedProposal, at: SessionInstant) -> [Event] {
        waiting.maximumHold = cap
        let expired = suspensions.indices.compactMap { index in
            holdExpiry(of: suspensions[index]).map { $0 < at ? index : nil } ?? nil
        }
        // Cut short before the record: they expire at its instant, not in its past.
        for index in expired { suspensions[index].began = at - holdLimit(for: suspensions[index].reason) }
        return [changed(ordered)] + releaseExpiredHolds(at: at)
    }
}

extension CoordinationSnapshot {
    /// The holds as the records could have left them: every suspension that holds the group
    /// says when it began, no later than the snapshot's ordering instant and its lead (one that
    /// did not could hold the group for ever), and the group's cap is one a record could set.
    func holdsRejection(orderedAt: SessionInstant) -> ProposalRejection? {
        for suspension in core.suspensions where suspension.holdsGroup {
            guard let began = suspension.began, began <= orderedAt + CoordinationCore.maximumLead else {
                return ProposalRejection(.effectiveInstantOutOfRange, "a snapshot's holding suspension began at no instant it could have")
            }
        }
        return CoordinationCore.maximumHoldRejection(core.waiting.maximumHold)
    }
}
