import Foundation
import TandemClock

/// The group's shared queue, from a program: every change is proposed to the group and applied
/// by everyone in order (`CoordinationCore+Queue.swift` says what each does to the item).
extension PlaybackCoordinator {
    /// The group's shared queue, as this participant holds it.
    public var queue: PlaybackQueue { core.queue }

    /// Proposes `change` to the group's queue. A change every participant would skip (an unknown
    /// entry, an entry out of bounds, a queue over `CoordinationCore.maximumQueueBytes`) is
    /// refused with a `ProposalRejection`.
    public func coordinateQueueChange(_ change: PlaybackQueue.Change) throws {
        try request(.queue(change))
    }

    /// Appends an item to the group's queue (an empty queue makes it current); returns the
    /// entry's id.
    @discardableResult
    public func appendItem(identifier: String, identity: String? = nil, duration: TimeSpan? = nil) throws -> UUID {
        let entry = PlaybackQueue.Entry(identifier: identifier, identity: identity, duration: duration)
        try coordinateQueueChange(.append(entry))
        return entry.id
    }

    /// Moves the group to the next entry of the queue (as `AVQueuePlayer.advanceToNextItem()`);
    /// at the last one, the group pauses on its last frame.
    public func advanceToNextItem() throws { try coordinateQueueChange(.next) }

    /// Moves the group back to the previous entry of the queue; at the first, nothing changes.
    public func returnToPreviousItem() throws { try coordinateQueueChange(.previous) }

    /// Sets what the group does at the end of an item (as `AVPlayer.actionAtItemEnd`).
    public func setActionAtItemEnd(_ action: PlaybackQueue.ActionAtItemEnd) throws {
        try coordinateQueueChange(.setActionAtItemEnd(action))
    }
}

extension PlaybackCoordinatorDelegate {
    /// No identity known.
    public var currentItemIdentity: String? { nil }
}

extension PlaybackCoordinator {
    /// Reports the delegate's current item (identifier and identity) to the group, as
    /// `coordinateWithSession(_:)` does by itself: a session whose queue is empty takes the first
    /// reported item as its first entry (`CoordinationCore+Queue.swift`), so that no participant
    /// has to `transitionToItem` first.
    ///
    /// Only for a delegate that knows its item's content identity (`currentItemIdentity`: the
    /// built-in player's item given one, mpv's file): a delegate that knows none reports nothing
    /// by itself (a program calls `reportItem(_:identity:ready:)`), so that the ordered history
    /// of programs written before stays as it was, record for record.
    public func reportDelegateItem() {
        guard let delegate, let item = delegate.currentItemIdentifier, let identity = delegate.currentItemIdentity else { return }
        try? reportItem(item, identity: identity, ready: true)
    }
}
