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
    /// What assigning `activity` does: once joined, proposes it to the group (and shows it here
    /// at once; the group's order then settles concurrent changes the same way for everyone);
    /// before joining, sets it here alone (it is what the session starts with). Returns whether
    /// it took the assignment.
    func propose(_ activity: Activity) -> Bool {
        let (invalidated, joined) = core.withLock { ($0.invalidated, $0.active.contains(localParticipant.id)) }
        if invalidated { return true }
        guard joined else { return false }
        // An assignment cannot throw: one that cannot be sent (the link just failed, the session
        // is ending) leaves the activity as it was, as the session's state then says why.
        guard (try? sendOrdered(try ActivityChange.encode(activity), retention: .kept)) != nil else { return true }
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
        guard core.withLock({ !$0.invalidated }) else { return }
        $activity.storage.value = activity
    }
}
