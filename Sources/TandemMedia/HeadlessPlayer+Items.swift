import Foundation
import TandemPlayback
import TandemClock
import TandemMediaTypes

/// The built-in player's items: preparing the next one, switching to it at an instant, and
/// replacing the current one as AVPlayer does.
extension HeadlessPlayer {
    /// The item prepared to follow, if any (`prepare(_:at:)`).
    public var preparedItem: PlaybackItem? {
        engine.lock.withLock { engine.prepared?.item }
    }

    /// The item known by `identifier`: the current one, the prepared one, or one that
    /// `replaceCurrentItem(with:)` proposed to the group (so that the coordinator's delegate can
    /// open what the group switched to).
    public func item(withIdentifier identifier: String) -> PlaybackItem? {
        engine.lock.withLock {
            if engine.currentItem.identifier == identifier { return engine.currentItem }
            if let prepared = engine.prepared, prepared.item.identifier == identifier { return prepared.item }
            return engine.namedItems.last { $0.identifier == identifier }
        }
    }

    /// Opens `item` and decodes it ahead from `itemTime`, while the current item
    /// plays on; `switchToPreparedItem(timeline:)` then switches to it at an instant, its first
    /// frames already decoded. Replaces an item prepared before.
    ///
    /// The item is opened on the calling thread (a file in milliseconds, a URL as fast as its
    /// server answers), so that an item that cannot be opened throws here; it is decoded on the
    /// player's decoding thread, after the current item's queue is full. The low-level path: it
    /// never goes to the group.
    public func prepare(_ item: PlaybackItem, at itemTime: ItemTime) throws(MediaError) {
        let file = try MediaFile(item: item)
        let decoder = try HeadlessPlayer.decoder(for: file, options: options)
        engine.lock.withLock { engine.prepareLocked(item: item, decoder: decoder, at: max(.zero, itemTime)) }
    }

    /// `prepare(_:at:)` from an item time in bare nanoseconds.
    @available(*, deprecated, message: "pass an ItemTime")
    public func prepare(_ item: PlaybackItem, at itemTime: Int64) throws(MediaError) {
        try prepare(item, at: ItemTime(nanoseconds: itemTime))
    }

    /// Names the item that follows each current one (a queue's next entry): whenever the player
    /// has nothing prepared, it opens that item and decodes it ahead from its start, after the
    /// current item's queue is full, so that a switch to it (a group's `next`, or the end of the
    /// current item) finds its first pictures and sound decoded, as a gapless player's does.
    /// A command to prepare another item replaces it, as any `prepare(_:at:)` does.
    ///
    /// `following` gets the current item's identifier and returns the item after it, or nil for
    /// none. It runs on the player's decoding thread, once per current item and again after each
    /// call of this method (call it again when what follows changes); it must not call into the
    /// player. An item that cannot be opened is not prepared. Pass nil to stop.
    public func setFollowingItem(_ following: (@Sendable (_ current: String) -> PlaybackItem?)?) {
        let options = options
        var follower: PlaybackEngine.Follower?
        if let following {
            follower = { current in
                guard let item = following(current), let file = try? MediaFile(item: item),
                      let decoder = try? HeadlessPlayer.decoder(for: file, options: options) else { return nil }
                return (item: item, decoder: decoder)
            }
        }
        engine.lock.withLock {
            engine.follower = follower
            engine.followed = nil
            engine.decodingWanted.broadcast()
        }
    }

    /// Switches to the prepared item at `timeline`'s anchor instant: from that instant frames
    /// come from it, following `timeline` (its first frame at the anchor, as tightly on time as
    /// any other), and nothing of the old item is presented after. At once if the anchor is not
    /// in the future. Throws when no item is prepared or the rate is invalid.
    ///
    /// A timeline scheduled later for an instant after the switch applies to the new item; one
    /// for the switch's instant or before it cancels the switch (the item stays prepared). The
    /// low-level path: it never goes to the group.
    public func switchToPreparedItem(timeline: PresentationTimeline) throws(MediaError) {
        guard timeline.isValid else { throw MediaError.invalidArgument("rate", "\(timeline.rate) is outside 0.25...4") }
        let switched = engine.lock.withLock { engine.switchToPreparedLocked(timeline, now: .now()) }
        guard switched else {
            throw MediaError.invalidArgument("switchToPreparedItem", "no item is prepared; call prepare(_:at:) first")
        }
    }

    /// Opens `item` and switches to it at `timeline`'s anchor instant: `prepare` and
    /// `switchToPreparedItem` in one (the decoder has only until the anchor to get ahead). The
    /// low-level path: it never goes to the group.
    public func replaceCurrentItem(with item: PlaybackItem, timeline: PresentationTimeline) throws(MediaError) {
        guard timeline.isValid else { throw MediaError.invalidArgument("rate", "\(timeline.rate) is outside 0.25...4") }
        try prepare(item, at: timeline.anchorItemTime)
        try switchToPreparedItem(timeline: timeline)
    }

    /// Replaces the current item with `item`, in the manner of AVPlayer's `replaceCurrentItem(with:)`:
    /// it starts at its beginning, playing if the player was (a moment ahead, `Options.seekLead`,
    /// so that its first frame is on time).
    ///
    /// Coordinated, the change is proposed to the group (`transitionToItem(identifier:at:)`), and
    /// the player switches when the group's command comes; the item is remembered so that
    /// `item(withIdentifier:)` finds it then.
    public func replaceCurrentItem(with item: PlaybackItem) throws(MediaError) {
        if playbackCoordinator.isCoordinating {
            engine.lock.withLock {
                engine.namedItems.removeAll { $0.identifier == item.identifier }
                engine.namedItems.append(item)
                if engine.namedItems.count > HeadlessPlayer.namedItemLimit { engine.namedItems.removeFirst() }
            }
            try propose("switch to \(item.identifier)") { try playbackCoordinator.transitionToItem(identifier: item.identifier) }
            return
        }
        let file = try MediaFile(item: item)
        let decoder = try HeadlessPlayer.decoder(for: file, options: options)
        let start = max(.zero, ItemTime.zero + .seconds(file.info.startTime ?? 0))
        let now = HostInstant.now()
        let rate = timeline.rate
        let next = PresentationTimeline(rate: rate, anchorItemTime: start, anchorHostTime: rate > 0 ? now + options.seekLead : now)
        engine.lock.withLock {
            engine.prepareLocked(item: item, decoder: decoder, at: start)
            _ = engine.switchToPreparedLocked(next, now: now)
        }
    }

    /// How many items proposed by `replaceCurrentItem(with:)` the player remembers.
    static let namedItemLimit = 64
}
