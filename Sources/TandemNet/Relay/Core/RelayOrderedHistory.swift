import Foundation
import TandemWire

/// A session's ordered broadcasts so far, for late joiners, kept by their retention (the
/// header's word: the relay reads no body).
///
/// - Snapshots: the two newest are kept, so that a joiner who finds the newer one invalid falls
///   back to the older, and the newest of each publisher (of the `maximumPublishers` who
///   published last), so that one participant publishing bogus snapshots in a row does not push
///   out another's: these are the fallbacks. An older snapshot is kept too while it stands
///   after the lowest of the orders the fallbacks reflect, for a joiner restoring from any of
///   them needs every order after what it reflects, and a snapshot dropped there would be a gap
///   it cannot tell from a lost change (several participants publishing at once after a burst
///   can give snapshots in a row, the newest reflecting an order before the others').
/// - Playback records: dropped once they are at or below the lowest of the orders the fallbacks
///   reflect (with one snapshot, the order it reflects), never past it, so that what any of
///   them does not cover is always there. A publisher that stops publishing holds that order
///   back until the caps drop its snapshot (`dropFallback()`).
/// - Recent records (chat): the newest `count` of them (the count the newest one names), and
///   older ones only until they are at or below that same order, as playback records: a
///   snapshot's history then never misses one of their orders.
/// - Kept records (activity, anything else): by the caps alone.
/// - Pinned records: the role records whose maker's signed statement the relay took with them
///   (`RelayFrame.authoredProposal`: role, policy and epoch changes, epoch histories), kept
///   apart from the caps, so that no flood of other records pushes them out of what a late
///   joiner replays. Only a statement the relay takes pins a record (one signed by an operator
///   it holds, or a claim or reinstatement it takes), so an invitee cannot fill this lane.
///   They are bounded on their own (`maximumPinnedCount` records, `maximumPinnedBytes` of
///   bodies): past either, the oldest pinned record goes, as the caps drop the oldest.
///
/// The caps (`maximumCount` records, `maximumBytes` of bodies) bound the rest together: a
/// safety net that a session of snapshots and the changes since does not reach, but a burst
/// that outruns the snapshots can, and so can a publisher's snapshot left behind. Over a cap the
/// fallback snapshots go first, with the records only they need (`dropFallback()`), then the
/// oldest records whatever their retention.
///
/// Every operation works in place: an append costs the same however much is kept, and drops
/// come off the front of a queue (one per retention and one for the pinned records, each in
/// order).
struct RelayOrderedHistory: Sendable {
    /// How many publishers' newest snapshots are kept as fallbacks (besides the two newest).
    static let maximumPublishers = 4
    /// The most pinned records a session keeps (the role book remembers as many changes).
    static let maximumPinnedCount = 4096
    /// The most bytes of pinned records' bodies a session keeps: about eighty removals that
    /// each hand the new key to the most participants a change holds, or thousands of others.
    static let maximumPinnedBytes = 16 * 1024 * 1024

    private var pinned = RecordQueue()
    private var kept = RecordQueue()
    private var playback = RecordQueue()
    private var snapshots = RecordQueue()
    private var recent = RecordQueue()
    /// How many recent records to keep: the count the newest of them names.
    private var recentLimit = Int.max
    /// The bytes of the bodies kept, the pinned records' included (what the session's memory
    /// budget counts).
    private(set) var bodyBytes = 0
    /// The bytes of the pinned records' bodies.
    private(set) var pinnedBytes = 0
    /// The newest snapshot of each of the last `maximumPublishers` publishers: its order and the
    /// order it reflects.
    private var newestByPublisher: [UUID: (order: UInt64, reflecting: UInt64)] = [:]

    /// How many are kept, the pinned records included.
    var count: Int { cappedCount + pinned.count }

    /// How many pinned records are kept.
    var pinnedCount: Int { pinned.count }

    /// How many the caps bound: all but the pinned.
    private var cappedCount: Int { kept.count + playback.count + snapshots.count + recent.count }

    /// The bytes the caps bound: all but the pinned records'.
    private var cappedBytes: Int { bodyBytes - pinnedBytes }

    /// How many snapshots are kept (the fallbacks, and any older one they still need).
    var snapshotCount: Int { snapshots.count }

    /// The entries kept, in order: what a joiner receives.
    var all: [RelayOrderedEntry] {
        var merged: [RelayOrderedEntry] = []
        merged.reserveCapacity(count)
        var queues = [pinned.elements, kept.elements, playback.elements, snapshots.elements, recent.elements]
        while true {
            var next: Int?
            for index in queues.indices {
                guard let candidate = queues[index].first else { continue }
                if let chosen = next, let best = queues[chosen].first, best.order <= candidate.order { continue }
                next = index
            }
            guard let next else { return merged }
            merged.append(queues[next].removeFirst())
        }
    }

    /// Keeps `entry` (whose order is above every kept one's), applies the retention rule a
    /// snapshot brings, then drops the oldest until at most `maximumCount` entries and
    /// `maximumBytes` of bodies are kept besides the pinned. A `pinned` entry (a role record
    /// whose statement the relay took) is kept apart from the caps, under its own bounds.
    mutating func append(_ entry: RelayOrderedEntry, pinned isPinned: Bool = false, maximumCount: Int, maximumBytes: Int) {
        bodyBytes += entry.body.count
        if isPinned {
            pinned.append(entry)
            pinnedBytes += entry.body.count
            while pinned.count > Self.maximumPinnedCount || pinnedBytes > Self.maximumPinnedBytes {
                let dropped = pinned.removeFirst()
                pinnedBytes -= dropped.body.count
                release(dropped)
            }
            return
        }
        switch entry.retention {
        case .kept:
            kept.append(entry)
        case .playback:
            playback.append(entry)
        case let .snapshot(reflecting):
            snapshots.append(entry)
            notePublisher(entry.sender, order: entry.order, reflecting: reflecting)
            while snapshots.count > 2, let first = snapshots.first, let covered, first.order <= covered {
                release(snapshots.removeFirst())
            }
        case let .recent(limit):
            recent.append(entry)
            recentLimit = Int(limit)
        }
        dropCovered()
        if cappedCount > maximumCount || cappedBytes > maximumBytes { dropFallback() }
        while cappedCount > maximumCount || cappedBytes > maximumBytes, let oldest = oldestQueue {
            switch oldest {
            case .kept: release(kept.removeFirst())
            case .playback: release(playback.removeFirst())
            case .snapshot:
                let dropped = snapshots.removeFirst()
                release(dropped)
                newestByPublisher = newestByPublisher.filter { $0.value.order > dropped.order }
            case .recent: release(recent.removeFirst())
            }
        }
    }

    /// Keeps `publisher`'s newest snapshot, ordered `order` and reflecting `reflecting`, as a
    /// fallback; past `maximumPublishers`, the publisher whose newest is the oldest is forgotten.
    private mutating func notePublisher(_ publisher: UUID, order: UInt64, reflecting: UInt64) {
        newestByPublisher[publisher] = (order, reflecting)
        guard newestByPublisher.count > Self.maximumPublishers,
              let oldest = newestByPublisher.min(by: { $0.value.order < $1.value.order }) else { return }
        newestByPublisher[oldest.key] = nil
    }

    /// Over a cap, the fallback goes first and whole: every snapshot but the newest, and the
    /// playback and recent records only they needed (at or below the order the newest reflects).
    /// Dropping the oldest records instead would cut the older snapshot's history and keep the
    /// snapshot, a fallback with a gap; this way what is left is the newest snapshot with its
    /// whole history, and only if that is still over the cap does its history lose the oldest.
    private mutating func dropFallback() {
        while snapshots.count > 1 { release(snapshots.removeFirst()) }
        if let newest = snapshots.first {
            newestByPublisher = newestByPublisher.filter { $0.value.order == newest.order }
        }
        dropCovered()
    }

    /// Drops what the kept snapshots cover (`covered`): the playback records at or below it, and
    /// the recent records past the newest `recentLimit` at or below it. Only a new snapshot (or
    /// `dropFallback()`) raises `covered`, and a new recent record may lower `recentLimit`, so
    /// anything else finds nothing to drop at the first comparison.
    private mutating func dropCovered() {
        guard let covered else { return }
        while let first = playback.first, first.order <= covered { release(playback.removeFirst()) }
        while recent.count > recentLimit, let first = recent.first, first.order <= covered { release(recent.removeFirst()) }
    }

    /// The lowest of the orders the fallbacks reflect (the two newest snapshots, and each
    /// publisher's newest): what a late joiner's history needs no record at or below, whichever
    /// of them it restores from (a newer one may reflect an order before an older one's, its
    /// publisher behind).
    private var covered: UInt64? {
        let newest = snapshots.elements.suffix(2).compactMap(\.retention.reflectedOrder).min()
        let publishers = newestByPublisher.values.lazy.map(\.reflecting).min()
        return [newest, publishers].compactMap { $0 }.min()
    }

    private mutating func release(_ entry: RelayOrderedEntry) {
        bodyBytes -= entry.body.count
    }

    private enum Lane { case kept, playback, snapshot, recent }

    /// Which capped queue holds the oldest entry kept, nil when none is kept.
    private var oldestQueue: Lane? {
        var oldest: (order: UInt64, lane: Lane)?
        func consider(_ entry: RelayOrderedEntry?, _ lane: Lane) {
            guard let entry, oldest.map({ entry.order < $0.order }) ?? true else { return }
            oldest = (entry.order, lane)
        }
        consider(kept.first, .kept)
        consider(playback.first, .playback)
        consider(snapshots.first, .snapshot)
        consider(recent.first, .recent)
        return oldest?.lane
    }
}

/// A cluster's snapshot of the session (`ClusterSessionSnapshot`) carries the history whole: what
/// it keeps, the count of recent records to keep, and the publishers whose snapshots are
/// fallbacks, so that a relay loading the session from the snapshot keeps and drops alike.
extension RelayOrderedHistory {
    /// The publishers' newest snapshots, by publisher: the order of each and the order it reflects.
    typealias Publishers = [UUID: (order: UInt64, reflecting: UInt64)]

    /// What a snapshot of the session keeps of the history: every entry kept, in order, the
    /// count of recent records to keep, the publishers' newest snapshots, and the orders of the
    /// pinned records.
    var retained: (entries: [RelayOrderedEntry], recentLimit: Int, publishers: Publishers, pinned: Set<UInt64>) {
        (all, recentLimit, newestByPublisher, Set(pinned.elements.map(\.order)))
    }

    /// The history `retained` described, each entry back in its queue: the pinned lane for the
    /// orders in `pinned`, its retention's queue for the rest (the entries in order, as
    /// `retained` gives them).
    init(entries: [RelayOrderedEntry], recentLimit: Int, publishers: Publishers, pinned pinnedOrders: Set<UInt64> = []) {
        self.init()
        for entry in entries {
            bodyBytes += entry.body.count
            if pinnedOrders.contains(entry.order) {
                pinned.append(entry)
                pinnedBytes += entry.body.count
                continue
            }
            switch entry.retention {
            case .kept: kept.append(entry)
            case .playback: playback.append(entry)
            case .snapshot: snapshots.append(entry)
            case .recent: recent.append(entry)
            }
        }
        self.recentLimit = recentLimit
        newestByPublisher = publishers
    }
}

/// Entries in order, taken off the front in place: the dropped prefix is skipped by an index and
/// compacted away once it is most of the array, so each removal costs O(1) amortised.
private struct RecordQueue: Sendable {
    private var entries: [RelayOrderedEntry] = []
    private var head = 0

    var count: Int { entries.count - head }
    var first: RelayOrderedEntry? { head < entries.count ? entries[head] : nil }
    var elements: ArraySlice<RelayOrderedEntry> { entries[head...] }

    mutating func append(_ entry: RelayOrderedEntry) { entries.append(entry) }

    /// Removes the first entry (there must be one).
    mutating func removeFirst() -> RelayOrderedEntry {
        let entry = entries[head]
        head += 1
        if head > 64, head * 2 > entries.count {
            entries.removeFirst(head)
            head = 0
        }
        return entry
    }
}
