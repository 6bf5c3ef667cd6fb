import Foundation
import TandemWire

/// An activity change as it travels in the session's ordered stream: a marker no JSON body can
/// start with, then the activity's description (identifier and JSON). It is kept by the relay
/// (`.kept`), so that late joiners replay every change from the history.
package enum ActivityChange {
    /// The two bytes that open every activity change (a NUL, then "A").
    static let marker: [UInt8] = [0x00, 0x41]

    /// Whether an ordered record's plaintext is an activity change, not a playback proposal: the
    /// coordinator skips these (they take an order number like any other record).
    package static func isChange(_ body: [UInt8]) -> Bool {
        body.count >= marker.count && Array(body.prefix(marker.count)) == marker
    }

    static func encode<Activity: GroupActivity>(_ activity: Activity) throws -> [UInt8] {
        marker + Array(try JSONEncoder().encode(ActivityDescription(activity)))
    }

    static func decode(_ body: [UInt8]) -> ActivityDescription? {
        guard isChange(body) else { return nil }
        return try? JSONDecoder().decode(ActivityDescription.self, from: Data(body.dropFirst(marker.count)))
    }
}

extension GroupSession {
    /// What assigning `activity` does: once joined, proposes it to the group and shows it here
    /// at once; before joining, sets it here alone (it is what the session starts with).
    /// Returns whether it took the assignment.
    ///
    /// The group's order settles concurrent changes the same way for everyone: the last in
    /// order wins. Shown at once, this participant's change stands until it comes back in that
    /// order; a change from someone else ordered before it is not shown in between.
    func propose(_ activity: Activity) -> Bool {
        let (invalidated, joined) = core.withLock { core in
            let joined = !core.invalidated && core.active.contains(localParticipant.id)
            if joined { core.pendingActivityChanges += 1 }
            return (core.invalidated, joined)
        }
        if invalidated { return true }
        guard joined else { return false }
        // An assignment cannot throw: one that cannot be sent (the link just failed, the session
        // is ending) leaves the activity as it was, as the session's state then says why.
        guard (try? sendOrdered(try ActivityChange.encode(activity), retention: .kept)) != nil else {
            core.withLock { $0.pendingActivityChanges -= 1 }
            return true
        }
        $activity.storage.value = activity
        return true
    }

    /// Adopts an activity change that the group ordered (the history's, for a late joiner).
    func activityChanged(_ body: [UInt8], by sender: UUID) {
        guard let description = ActivityChange.decode(body), description.identifier == Activity.activityIdentifier,
              let activity = try? description.decode(Activity.self) else {
            reject(Rejection(reason: .malformed, sender: sender, path: "activity"))
            return
        }
        let shows = core.withLock { core -> Bool in
            guard !core.invalidated else { return false }
            if sender == localParticipant.id, core.pendingActivityChanges > 0 { core.pendingActivityChanges -= 1 }
            // While this participant's own changes are still on their way, they come later in the
            // order than this one: the newest of them is what is shown.
            return core.pendingActivityChanges == 0
        }
        if shows { $activity.storage.value = activity }
    }
}
