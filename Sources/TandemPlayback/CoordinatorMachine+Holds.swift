import Foundation
import TandemClock

/// This participant's side of the hold limits (the core decides for the group,
/// `CoordinationCore+Holds.swift`): the machine asks to be woken ahead of the next hold's end,
/// as it is ahead of an item's end (`CoordinatorMachine+Queue.swift`), and from then on decides
/// on the group as it will be once released (`CoordinationCore.settled(at:)` releases holds), so
/// that the player is issued the play for the release's own instant; at that instant it tells the
/// program (`.holdExpired`), once, ahead of the record that settles it. A suspended participant's
/// player is its own: its machine wakes only to tell the program, at the instant itself.
extension CoordinatorMachine {
    /// The host instant at which the machine wakes for the next hold's end not yet told: an
    /// `itemEndLead` ahead of it, or at it for a suspended participant (it issues its player
    /// nothing). Nil when no hold is running, or before the clock mapping.
    func holdExpiryWake() -> HostInstant? {
        guard let mapping else { return nil }
        let group = itemEndView ?? core
        let expiries = group.suspensions.filter { !announcedHoldReleases.contains($0.id) }.compactMap { group.holdExpiry(of: $0) }
        guard let expiry = expiries.min() else { return nil }
        return mapping.hostTime(atSession: ownSuspensions.isEmpty ? expiry - Self.itemEndLead : expiry)
    }

    /// A wake-up for the next hold's end after a record whose own directives asked for none (a
    /// suspended participant's, whose player is not followed), so that it tells the program on
    /// time too.
    func holdWake(after directives: [OrderedDirective]) -> [OrderedDirective] {
        guard !directives.contains(where: { if case .wake = $0 { true } else { false } }), holdExpiryWake() != nil,
              let wake = nextWake() else { return [] }
        return [.wake(at: wake)]
    }
}
