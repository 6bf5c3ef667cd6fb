import Foundation
import TandemClock

/// The shared queue in the replicated state: queue changes, the end of an item, and how the
/// older item proposals (`transition`, the first `state` report) keep the queue and the timeline
/// one thing.
///
/// The queue is the one source of truth for the item: the timeline's item is always the queue's
/// current entry's identifier (nil while the queue is empty). Every rule here is a pure function
/// of the core and the ordered record (or the instant), so every participant agrees:
///
/// - A `.queue` change that makes another entry current switches the group to it at the record's
///   effective instant, from item time 0, at the intended rate (a playing group keeps playing, as
///   `AVQueuePlayer.advanceToNextItem()` does); `next` at the last entry pauses on its last frame.
/// - A `transition(item:at:)` jumps to the first entry with that identifier, or replaces the
///   current entry with one for it (`replaceCurrent`), so that callers that name items by
///   transition work with a queue too.
/// - While the queue is empty, the first `state` report that names an item makes it the queue's
///   first entry (its identity with it): whoever is ordered first decides, the same on every
///   participant, and a program need not `transitionToItem` first.
/// - Entries the core makes itself (from a transition or the first report) carry no duration:
///   their items have no end of item, and a group plays on past the end of such an item (the
///   proposals' validation does not change for them). An item gets an end
///   when whoever appends it gives its duration (`PlaybackQueue.Entry.duration`).
/// - The end of an item (`settle(at:)`) needs no proposal: when the timeline reaches the current
///   entry's duration, at that session instant the group advances to the next entry at item
///   time 0 (or pauses on the last frame, per `PlaybackQueue.ActionAtItemEnd`, and at the end of
///   the last entry). `apply(_:)` settles the ends due by a record's effective instant before the
///   record, so that every participant applies them at the same point of the ordered stream.
extension CoordinationCore {
    /// How many bytes the queue's entries may take, counted by `queueBytes(of:)` as they are
    /// encoded in a snapshot: 160 KiB, so that a snapshot of a state whose queue is full
    /// (`CoordinationSnapshot.maximumBytes`, 192 KiB) still has `CoordinationSnapshot.restBytes`
    /// (32 KiB) for the rest (timeline, suspensions, participants, the gate).
    public static let maximumQueueBytes = 160 * 1024
    /// What an entry counts against `maximumQueueBytes` besides its strings: its id, its duration,
    /// the keys and punctuation of its encoding (about 110 bytes).
    public static let queueEntryOverheadBytes = 128

    /// The bytes `entry` counts against `maximumQueueBytes`: at least what it takes in a
    /// snapshot's JSON (`SnapshotLimitTests` checks the bound against the encoder).
    public static func queueBytes(of entry: PlaybackQueue.Entry) -> Int {
        queueEntryOverheadBytes + encodedBytes(of: entry.identifier) + (entry.identity.map(encodedBytes(of:)) ?? 0)
    }

    /// The most bytes `string` takes inside a JSON string: one per UTF-8 byte, two for a quote,
    /// a backslash or a slash (`\"`, `\\`, `\/`), six for a control character (`\u001f`). Counting
    /// the UTF-8 bytes alone let a queue of paths or control characters encode to twice or six
    /// times its budget, past any snapshot.
    public static func encodedBytes(of string: String) -> Int {
        string.utf8.reduce(0) { total, byte in
            total + (byte < 0x20 ? 6 : byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "/") ? 2 : 1)
        }
    }

    /// The bytes the queue's entries count against `maximumQueueBytes`.
    public var queueBytes: Int { queue.entries.reduce(0) { $0 + Self.queueBytes(of: $1) } }

    /// Why the queue change must be skipped, or nil: `PlaybackQueue.rejection(of:)`, and the
    /// byte budget `maximumQueueBytes` for the entries it would add.
    public func queueRejection(of change: PlaybackQueue.Change) -> ProposalRejection? {
        if let rejection = queue.rejection(of: change) { return rejection }
        let added: Int
        switch change {
        case .append(let entry), .insert(let entry, _):
            added = Self.queueBytes(of: entry)
        case .replaceCurrent(let entry):
            added = Self.queueBytes(of: entry) - (queue.current.map(Self.queueBytes(of:)) ?? 0)
        case .remove, .move, .next, .previous, .jump, .setActionAtItemEnd:
            return nil
        }
        let total = queueBytes + added
        guard total > Self.maximumQueueBytes else { return nil }
        return ProposalRejection(.tooManyEntries, "the queue's entries would take \(total) bytes, more than its \(Self.maximumQueueBytes)")
    }

    /// The index of the current entry in the queue, or nil when it is empty.
    public var currentEntryIndex: Int? { queue.currentID.flatMap { queue.index(of: $0) } }

    /// The session instant at which the current item ends on the current timeline, or nil (no
    /// duration known, paused, waiting, or the timeline's item is not the queue's).
    public var currentItemEndInstant: SessionInstant? {
        guard timeline.item != nil, timeline.item == queue.current?.identifier else { return nil }
        return queue.currentItemEndInstant(anchorItemTime: timeline.anchorMediaTime, anchorInstant: timeline.anchorSessionTime,
                                           rate: timeline.rate)
    }

    /// Applies the hold limits and the ends of items due at or before `instant`, in order, and
    /// returns one `.holdExpired` or `.itemEnded` event for each. The version does not change: an end is no record, and every
    /// participant applies it at the same point of the ordered stream (`apply(_:)` calls this
    /// with each record's effective instant first). Bounded by the queue's length.
    @discardableResult
    public mutating func settle(at instant: SessionInstant) -> [Event] {
        // Holds expire first: an item ends only while the group plays, which it does not while held.
        var events = releaseExpiredHolds(at: instant)
        for _ in 0...queue.entries.count {
            guard let end = currentItemEndInstant, end <= instant, let itemEnd = queue.itemEnd,
                  let duration = queue.current?.duration else { break }
            switch itemEnd {
            case .advance(let next):
                queue.apply(.jump(to: next.id))
                timeline.item = next.identifier
                itemChosenBy = nil
                reanchor(media: .zero, at: end)
                events.append(.itemEnded(timeline, advancedTo: next, index: queue.index(of: next.id)))
            case .pauseAtEnd:
                intendedRate = 0
                reanchor(media: ItemTime(nanoseconds: duration.nanoseconds), at: end)
                events.append(.itemEnded(timeline, advancedTo: nil, index: nil))
            }
        }
        return events
    }

    /// This core with the ends of items due at or before `instant` applied: what the group
    /// watches at `instant`, for the machine to follow ahead of the next record. The replicated
    /// core itself settles only at records (`apply(_:)`), so that reading ahead never changes
    /// what a later record does.
    public func settled(at instant: SessionInstant) -> CoordinationCore {
        var copy = self
        copy.settle(at: instant)
        return copy
    }

    /// A queue change, valid, applied at `at`.
    mutating func applyQueue(_ change: PlaybackQueue.Change, at: SessionInstant, _ ordered: OrderedProposal) -> [Event] {
        let position = timeline.mediaTime(atSessionTime: at)
        let effect = queue.effectOnCurrent(of: change)
        queue.apply(change)
        switch effect {
        case .unchanged:
            // A replaced current entry that keeps its item: the item's identity may differ.
            timeline.item = queue.current?.identifier
            return [changed(ordered)]
        case .switches(let entry):
            timeline.item = entry?.identifier
            if entry == nil { intendedRate = 0 }
            reanchor(media: .zero, at: at)
            return [changed(ordered)] + mismatchEvents()
        case .pausesAtEnd:
            intendedRate = 0
            let end = queue.current?.duration.map { ItemTime(nanoseconds: $0.nanoseconds) }
            reanchor(media: end ?? position, at: at)
            return [changed(ordered)]
        }
    }

    /// A `transition(item:at:)` keeps the queue the source of truth: the first entry with the
    /// identifier becomes current, or the current entry is replaced by one for it (its id made
    /// from the record's order, the same on every participant).
    mutating func followTransition(toItem item: String, order: UInt64) {
        if queue.current?.identifier == item { return }
        if let entry = queue.entries.first(where: { $0.identifier == item }) {
            queue.apply(.jump(to: entry.id))
            return
        }
        let identity = announcedIdentity(ofItem: item)
        queue.apply(.replaceCurrent(with: PlaybackQueue.Entry(id: Self.entryID(forOrder: order), identifier: item, identity: identity)))
    }

    /// While the queue is empty and no item is chosen, the first report that names an item makes
    /// it the first entry, current, paused at its start.
    mutating func adoptFirstReportedItem(item: String?, identity: String?, order: UInt64) -> [Event] {
        guard let item, !item.isEmpty, queue.isEmpty, timeline.item == nil else { return [] }
        let entry = PlaybackQueue.Entry(id: Self.entryID(forOrder: order), identifier: item, identity: identity)
        guard queueRejection(of: .append(entry)) == nil else { return [] }
        queue.apply(.append(entry))
        timeline.item = item
        return []
    }

    /// The identity some participant announced for `item` (the one with the longest believed
    /// duration; ties by the identity's text, so that every participant picks the same).
    func announcedIdentity(ofItem item: String) -> String? {
        participants.values.compactMap { $0.item == item ? $0.identity : nil }
            .max { (Self.announcedDuration(in: $0) ?? .zero, $0) < (Self.announcedDuration(in: $1) ?? .zero, $1) }
    }

    /// The id of an entry the core makes itself for the record `order`: the same on every
    /// participant, and distinct from other such ids.
    static func entryID(forOrder order: UInt64) -> UUID {
        let o = withUnsafeBytes(of: order.bigEndian) { Array($0) }
        return UUID(uuid: (0x74, 0x61, 0x6e, 0x64, 0x65, 0x6d, 0x40, 0x80, o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7]))
    }
}
