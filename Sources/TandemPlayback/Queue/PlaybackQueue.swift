import Foundation
import TandemClock

/// The group's shared queue: the one source of truth for what the group watches, replicated by
/// applying the same ordered changes in the same order on every participant.
///
/// In the manner of AVFoundation's `AVQueuePlayer` (append, insert after, remove, advance, an
/// action at item end as `AVPlayer.ActionAtItemEnd`), with `previous` and `jump(to:)` besides, and
/// `replaceCurrent` as `AVPlayer.replaceCurrentItem(with:)`. Entries are known by UUIDs that their
/// proposer chooses, so that a change names an entry unambiguously whatever the others did first.
///
/// The queue has a current entry exactly when it holds any: appending or inserting into an empty
/// queue makes that entry current, removing the current entry moves current to the next one (or
/// the previous one if it was the last), and nothing moves current past the last entry: at the end
/// of the last item the group pauses on its last frame.
///
/// A pure value: `rejection(of:)` and `apply(_:)` decide from the queue and the change alone, so
/// that every participant, fed the same changes, holds the same queue.
public struct PlaybackQueue: Sendable, Codable, Equatable {
    /// An item in the queue.
    public struct Entry: Sendable, Codable, Equatable, Identifiable {
        /// The entry's identity, chosen by whoever proposed it (two entries may hold one item).
        public var id: UUID
        /// The item's identifier, as `PlaybackItem.identifier` and the timeline's item name it.
        public var identifier: String
        /// The item's content identity (`MediaIdentity`: `d=SECONDS;h=HASH`), when known.
        public var identity: String?
        /// The item's duration, when known: the end of item happens there.
        public var duration: TimeSpan?

        /// An entry for the item `identifier`, with a fresh id unless one is given.
        public init(id: UUID = UUID(), identifier: String, identity: String? = nil, duration: TimeSpan? = nil) {
            self.id = id
            self.identifier = identifier
            self.identity = identity
            self.duration = duration
        }
    }

    /// What the group does when the current item plays to its end, as `AVPlayer.ActionAtItemEnd`
    /// (`.none` has no meaning for a group: a timeline past its item's end shows the last frame).
    public enum ActionAtItemEnd: String, Sendable, Codable, Equatable, CaseIterable {
        /// Advance to the next entry (at the end of the last one, pause on its last frame).
        case advance
        /// Pause on the item's last frame.
        case pause
    }

    /// A change to the queue, proposed by a participant and applied in order by everyone.
    public enum Change: Sendable, Codable, Equatable {
        /// Adds an entry at the end.
        case append(Entry)
        /// Inserts an entry after the entry `after`, or at the front when `after` is nil.
        case insert(Entry, after: UUID?)
        /// Removes an entry; if it is the current one, current moves to the next (or the previous
        /// one if it was the last, or to nothing if it was the only one).
        case remove(UUID)
        /// Moves an entry after the entry `after` (to the front when nil); current stays.
        case move(UUID, after: UUID?)
        /// Advances to the next entry, whatever `actionAtItemEnd` says (as `AVQueuePlayer`'s
        /// `advanceToNextItem()`). At the last entry it changes nothing: that is the end of the
        /// last item, where the group pauses on its last frame (`effectOnCurrent(of:)` says so).
        case next
        /// Goes back to the previous entry; at the first it changes nothing.
        case previous
        /// Makes an entry current.
        case jump(to: UUID)
        /// Puts an entry in the current one's place, as `AVPlayer.replaceCurrentItem(with:)`; the
        /// rest of the queue stays. An empty queue gets it as its only, current entry.
        case replaceCurrent(with: Entry)
        /// Sets what the group does at the end of an item.
        case setActionAtItemEnd(ActionAtItemEnd)
    }

    /// What a change does to the current entry, for the machine to decide whether the group
    /// switches items (and pre-rolls the next) or pauses at the end.
    public enum CurrentEffect: Sendable, Equatable {
        /// The current entry stays (the change is elsewhere in the queue, or changes nothing).
        case unchanged
        /// Another entry becomes current (nil: the queue is left empty).
        case switches(to: Entry?)
        /// `next` at the last entry: the group pauses on the last frame of the current item.
        case pausesAtEnd
    }

    /// What happens when the current item plays to its end.
    public enum ItemEnd: Sendable, Equatable {
        /// The group advances to this entry, at the item's end instant.
        case advance(to: Entry)
        /// The group pauses on the item's last frame (the action is `.pause`, or the current
        /// entry is the last).
        case pauseAtEnd
    }

    /// How many entries a queue may hold.
    public static let maximumEntries = 10_000
    /// The longest item identifier an entry may carry (UTF-8 bytes), as a transition's.
    public static let maximumIdentifierBytes = 1024
    /// The longest content identity an entry may carry (UTF-8 bytes), as a `state` report's.
    public static let maximumIdentityBytes = 256
    /// The longest duration an entry may announce: 24 hours.
    public static let maximumEntryDuration = TimeSpan(nanoseconds: 24 * 3_600 * 1_000_000_000)

    /// The entries, in the order the group plays them.
    public private(set) var entries: [Entry]
    /// The current entry's id: nil exactly when the queue is empty.
    public private(set) var currentID: UUID?
    /// What the group does at the end of an item.
    public private(set) var actionAtItemEnd: ActionAtItemEnd

    /// An empty queue that advances at the end of an item.
    public init(actionAtItemEnd: ActionAtItemEnd = .advance) {
        entries = []
        currentID = nil
        self.actionAtItemEnd = actionAtItemEnd
    }

    /// A queue of `entries` whose first is current (or `current`, when given).
    ///
    /// Meant for tests and programs that build a queue locally; a queue that comes from a peer
    /// (in a snapshot) is checked with `inconsistency()` before it is adopted.
    public init(entries: [Entry], current: UUID? = nil, actionAtItemEnd: ActionAtItemEnd = .advance) {
        self.entries = entries
        currentID = current ?? entries.first?.id
        self.actionAtItemEnd = actionAtItemEnd
    }

    /// The current entry, or nil when the queue is empty.
    public var current: Entry? { currentID.flatMap { entry(id: $0) } }

    /// Whether the queue holds no entries.
    public var isEmpty: Bool { entries.isEmpty }

    /// The entry with `id`, or nil.
    public func entry(id: UUID) -> Entry? { index(of: id).map { entries[$0] } }

    /// Where the entry with `id` stands (0 is the front), or nil.
    public func index(of id: UUID) -> Int? { entries.firstIndex { $0.id == id } }

    /// The entry that follows the entry `id`, or nil (at the last, or for an unknown id).
    public func entry(after id: UUID) -> Entry? {
        guard let index = index(of: id), index + 1 < entries.count else { return nil }
        return entries[index + 1]
    }

    /// The entry that precedes the entry `id`, or nil (at the first, or for an unknown id).
    public func entry(before id: UUID) -> Entry? {
        guard let index = index(of: id), index > 0 else { return nil }
        return entries[index - 1]
    }

    /// What happens when the current item plays to its end: the next entry when the action is
    /// `.advance` and one follows, else a pause on the last frame. Nil when the queue is empty.
    public var itemEnd: ItemEnd? {
        guard let currentID else { return nil }
        if actionAtItemEnd == .advance, let next = entry(after: currentID) { return .advance(to: next) }
        return .pauseAtEnd
    }

    /// The session instant at which the current item ends on a timeline that shows item time
    /// `anchorItemTime` at `anchorInstant` and runs at `rate`: nil when the queue is empty, the
    /// current entry's duration is unknown, or the timeline does not move forward (rate 0 or
    /// less, or NaN). A timeline already past the end ends at `anchorInstant`.
    public func currentItemEndInstant(anchorItemTime: ItemTime, anchorInstant: SessionInstant, rate: Double) -> SessionInstant? {
        guard let duration = current?.duration, rate > 0 else { return nil }
        let remaining = ItemTime(nanoseconds: duration.nanoseconds) - anchorItemTime
        guard remaining > .zero else { return anchorInstant }
        return anchorInstant + remaining / rate
    }

    /// What `change` would do to the current entry, applied now. A change that would be rejected
    /// leaves it `.unchanged`.
    public func effectOnCurrent(of change: Change) -> CurrentEffect {
        guard rejection(of: change) == nil else { return .unchanged }
        if change == .next, let currentID, entry(after: currentID) == nil { return .pausesAtEnd }
        var after = self
        after.apply(change)
        if after.currentID == currentID {
            // A replaced current entry has a fresh id, so equal ids mean the same entry.
            return .unchanged
        }
        return .switches(to: after.current)
    }

    /// Why `change` must be skipped, or nil when it may be applied: an entry that breaks the
    /// bounds (`maximumEntries`, `maximumIdentifierBytes`, `maximumIdentityBytes`, a duration
    /// within 0…`maximumEntryDuration`), an id the queue holds already, or one it does not hold.
    public func rejection(of change: Change) -> ProposalRejection? {
        switch change {
        case .append(let entry):
            return additionRejection(entry)
        case .insert(let entry, let after):
            if let after, index(of: after) == nil { return Self.unknown(after, "insert after") }
            return additionRejection(entry)
        case .remove(let id):
            return index(of: id) == nil ? Self.unknown(id, "remove") : nil
        case .move(let id, let after):
            if index(of: id) == nil { return Self.unknown(id, "move") }
            if let after, index(of: after) == nil { return Self.unknown(after, "move after") }
            return nil
        case .jump(let id):
            return index(of: id) == nil ? Self.unknown(id, "jump to") : nil
        case .replaceCurrent(let entry):
            if let rejection = Self.entryRejection(entry) { return rejection }
            if index(of: entry.id) != nil { return Self.duplicate(entry.id) }
            // Into an empty queue it adds an entry, which an empty queue always has room for.
            return nil
        case .next, .previous, .setActionAtItemEnd:
            return nil
        }
    }

    /// Applies `change` and returns whether the queue changed. A change that `rejection(of:)`
    /// refuses changes nothing (the machine skips it with that rejection first), nor does one
    /// that would leave the queue as it is (`next` at the last entry, `previous` at the first,
    /// a jump to the current entry, a move to where the entry stands).
    @discardableResult
    public mutating func apply(_ change: Change) -> Bool {
        guard rejection(of: change) == nil else { return false }
        switch change {
        case .append(let entry):
            entries.append(entry)
            if currentID == nil { currentID = entry.id }
            return true
        case .insert(let entry, let after):
            let position = after.flatMap { index(of: $0) }.map { $0 + 1 } ?? 0
            entries.insert(entry, at: position)
            if currentID == nil { currentID = entry.id }
            return true
        case .remove(let id):
            guard let index = index(of: id) else { return false }
            if currentID == id {
                currentID = index + 1 < entries.count ? entries[index + 1].id : (index > 0 ? entries[index - 1].id : nil)
            }
            entries.remove(at: index)
            return true
        case .move(let id, let after):
            guard id != after, let from = index(of: id) else { return false }
            var rest = entries
            let moved = rest.remove(at: from)
            let position = after.flatMap { target in rest.firstIndex { $0.id == target } }.map { $0 + 1 } ?? 0
            rest.insert(moved, at: position)
            guard rest != entries else { return false }
            entries = rest
            return true
        case .next:
            guard let currentID, let next = entry(after: currentID) else { return false }
            self.currentID = next.id
            return true
        case .previous:
            guard let currentID, let previous = entry(before: currentID) else { return false }
            self.currentID = previous.id
            return true
        case .jump(let id):
            guard id != currentID else { return false }
            currentID = id
            return true
        case .replaceCurrent(let entry):
            if let currentID, let index = index(of: currentID) {
                entries[index] = entry
            } else {
                entries.append(entry)
            }
            currentID = entry.id
            return true
        case .setActionAtItemEnd(let action):
            guard action != actionAtItemEnd else { return false }
            actionAtItemEnd = action
            return true
        }
    }

    /// Why this queue, as a peer sent it (in a snapshot), cannot be adopted, or nil when it can:
    /// within the bounds, every entry valid, no id twice, and a current entry exactly when the
    /// queue holds any, one that it holds.
    public func inconsistency() -> ProposalRejection? {
        if entries.count > Self.maximumEntries {
            return ProposalRejection(.tooManyEntries, "a queue may hold at most \(Self.maximumEntries) entries, not \(entries.count)")
        }
        var seen = Set<UUID>()
        for entry in entries {
            if let rejection = Self.entryRejection(entry) { return rejection }
            guard seen.insert(entry.id).inserted else { return Self.duplicate(entry.id) }
        }
        switch currentID {
        case nil where !entries.isEmpty:
            return ProposalRejection(.unknownEntry, "a queue of \(entries.count) entries has no current entry")
        case let id? where !seen.contains(id):
            return Self.unknown(id, "the current entry")
        default:
            return nil
        }
    }

    private func additionRejection(_ entry: Entry) -> ProposalRejection? {
        if let rejection = Self.entryRejection(entry) { return rejection }
        if index(of: entry.id) != nil { return Self.duplicate(entry.id) }
        if entries.count >= Self.maximumEntries {
            return ProposalRejection(.tooManyEntries, "the queue holds \(entries.count) entries already, its most")
        }
        return nil
    }

    /// Why `entry` may not stand in any queue, or nil.
    public static func entryRejection(_ entry: Entry) -> ProposalRejection? {
        let identifierBytes = entry.identifier.utf8.count
        if identifierBytes == 0 || identifierBytes > maximumIdentifierBytes {
            return ProposalRejection(.oversized, "an entry's item identifier must have 1 to \(maximumIdentifierBytes) bytes, not \(identifierBytes)")
        }
        if let identity = entry.identity, identity.utf8.count > maximumIdentityBytes {
            return ProposalRejection(.oversized, "an entry's content identity must have at most \(maximumIdentityBytes) bytes, "
                                         + "not \(identity.utf8.count)")
        }
        if let duration = entry.duration, duration < .zero || duration > maximumEntryDuration {
            return ProposalRejection(.durationOutOfRange, "an entry's duration \(duration) is not within 0 and \(maximumEntryDuration)")
        }
        return nil
    }

    private static func unknown(_ id: UUID, _ what: String) -> ProposalRejection {
        ProposalRejection(.unknownEntry, "\(what): the queue holds no entry \(id.uuidString)")
    }

    private static func duplicate(_ id: UUID) -> ProposalRejection {
        ProposalRejection(.duplicateEntry, "the queue holds an entry \(id.uuidString) already")
    }
}
