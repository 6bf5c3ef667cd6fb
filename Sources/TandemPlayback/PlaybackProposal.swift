import Foundation
import TandemClock

/// A change that a participant proposes; the relay orders it, and every participant applies it
/// at the same effective session instant. Media times are `ItemTime`s (encoded as bare
/// nanoseconds, as before).
public enum PlaybackProposal: Sendable, Codable, Equatable {
    /// Play (or change the rate) from the current position.
    case setRate(Double)
    /// Pause. `at` is the media time the originator saw when it paused, in `item`, the item it
    /// saw current; used when pauses snap to the originator's position. When the group has moved
    /// on to another item by the pause's effective instant (an item's end came between the
    /// request and its record), the group pauses where it is: `at` belongs to another item.
    case pause(at: ItemTime?, item: String? = nil)
    /// Move to a media time, keeping the rate. A seek names no item: it moves whichever item is
    /// the group's at its effective instant (so that a switch followed at once by a seek lands in
    /// the new item).
    case seek(to: ItemTime)
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
    /// Play (or change the rate) without waiting for the others' pre-roll (Apple's
    /// `playImmediately`): takes effect at its effective instant, as `setRate` did before the gate.
    case setRateImmediately(Double)
    /// Move to a media time without waiting for the others' pre-roll (Apple's
    /// `resumeImmediately`).
    case seekImmediately(to: ItemTime)
    /// The originator's player completed the seek the machine issued for the play ordered
    /// `version` (the gate's version): it is pre-rolled (`CoordinationCore+Waiting.swift`).
    case prerolled(version: UInt64)
    /// A change to the group's shared queue (`CoordinationCore+Queue.swift`); a change that
    /// makes another entry current switches the group's item to it, from its start.
    case queue(PlaybackQueue.Change)
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
