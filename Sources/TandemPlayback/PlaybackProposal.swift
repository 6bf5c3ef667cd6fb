import Foundation
import TandemClock

/// A change that a participant proposes; the relay orders it, and every participant applies it
/// at the same effective session instant. Media times are `ItemTime`s (encoded as bare
/// nanoseconds).
public enum PlaybackProposal: Sendable, Codable, Equatable {
    /// Play (or change the rate) from the current position.
    case setRate(Double)
    /// Pause. `at` is the media time the originator saw when it paused, in `item`, the item it
    /// saw current; used when pauses snap to the originator's position. When the group has moved
    /// on to another item by the pause's effective instant (an item's end came between the
    /// request and its record), the group pauses where it is: `at` belongs to another item.
    case pause(at: ItemTime?, item: String? = nil)
    /// Move to a media time of `item` (the item the originator saw current), keeping the rate.
    /// When the group is on another item at the seek's effective instant, the seek is skipped
    /// (`ProposalRejection.Reason.otherItem`), unless the originator itself made that item
    /// current (it switched, then sought before it saw its switch: the seek is meant for the new
    /// item). A seek naming no item moves whichever item is current.
    case seek(to: ItemTime, item: String? = nil)
    /// Switch to another item, from its start (or `at`), paused.
    case transition(item: String, at: ItemTime)
    /// Begin a suspension; `triggersWaiting` says whether the originator asks the group to wait
    /// for it, and `waitingLimit` how many participants may hold the group up for this reason at
    /// once (beyond it, a participant catches up on its own: Tandem's
    /// `PlaybackCoordinator.setGroupHoldLimit(_:forReason:)`).
    case beginSuspension(id: UUID, reason: SuspensionReason, triggersWaiting: Bool, waitingLimit: Int?)
    /// End a suspension, optionally proposing where to resume in `item` (the item the originator
    /// saw current). A proposed time in an item that is no longer the group's at the effective
    /// instant is not used: the suspension ends where the group is.
    case endSuspension(id: UUID, proposedTime: ItemTime?, item: String? = nil)
    /// What a participant has loaded (its identifier and content identity) and whether it is
    /// ready to play it.
    case state(item: String?, identity: String?, ready: Bool)
    /// A participant left the session: its suspensions end (proposed by whoever noticed; a
    /// repeat changes nothing).
    case departed(UUID)
    /// Play (or change the rate) without waiting for the others' pre-roll or suspensions (Apple's
    /// `playImmediately`): takes effect at its effective instant, and the suspensions that held
    /// the group stop holding it (each suspended participant comes in when its own ends).
    case setRateImmediately(Double)
    /// Move to a media time of `item` without waiting for the others' pre-roll (Apple's
    /// `resumeImmediately`); skipped as `seek` is when the group is on another item.
    case seekImmediately(to: ItemTime, item: String? = nil)
    /// The originator's player completed the seek the machine issued for the play ordered
    /// `version` (the gate's version): it is pre-rolled (`CoordinationCore+Waiting.swift`).
    case prerolled(version: UInt64)
    /// A change to the group's shared queue (`CoordinationCore+Queue.swift`); a change that
    /// makes another entry current switches the group's item to it, from its start.
    case queue(PlaybackQueue.Change)
    /// Whether the group's pauses snap to the media time their originator saw from now on (as
    /// setting AVFoundation's `pauseSnapsToMediaTimeOfOriginator`); the timeline does not move.
    case pauseSnapping(Bool)
    /// The longest any suspension holds the group from now on, whatever its reason's default
    /// (`SuspensionReason.defaultHoldLimit`) says, or nil for the defaults alone
    /// (`CoordinationCore+Holds.swift`); the timeline does not move unless a hold expires by it.
    case maximumHold(TimeSpan?)
}

/// A proposal as the relay delivered it: in order, stamped with session instants.
public struct OrderedProposal: Sendable, Equatable {
    /// Who proposed it.
    public var originator: UUID
    /// The relay's order number for it (the timeline's version once applied).
    public var order: UInt64
    /// When the relay ordered it. Validation requires `effectiveAt` to be at most
    /// `CoordinationCore.maximumLead` after it, and not before it.
    public var orderedAt: SessionInstant
    /// When it takes effect.
    public var effectiveAt: SessionInstant
    /// The change.
    public var proposal: PlaybackProposal

    /// An ordered proposal; without `orderedAt`, ordered at its effective instant (a lead of 0).
    public init(originator: UUID, order: UInt64, orderedAt: SessionInstant? = nil, effectiveAt: SessionInstant,
                proposal: PlaybackProposal) {
        self.originator = originator
        self.order = order
        self.orderedAt = orderedAt ?? effectiveAt
        self.effectiveAt = effectiveAt
        self.proposal = proposal
    }
}
