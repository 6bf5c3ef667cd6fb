/// Instants at which keys fall due, soonest first (a binary min-heap): what the relay's tick
/// visits instead of everything it holds.
///
/// An entry is removed only by coming due, so it may be stale by then (what it was scheduled for
/// happened, or was called off): the caller checks each key against its state when it pops, and
/// schedules again whatever makes a deadline sooner. A key may be in the heap several times.
struct DeadlineHeap<Key: Hashable & Sendable>: Sendable {
    private var entries: [Entry] = []

    private struct Entry: Sendable {
        var due: Int64
        var key: Key
    }

    /// How many entries it holds (stale ones included).
    var count: Int { entries.count }

    /// The soonest instant held, nil when empty.
    var soonest: Int64? { entries.first?.due }

    /// `key` falls due at `due`.
    mutating func schedule(_ key: Key, at due: Int64) {
        entries.append(Entry(due: due, key: key))
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].due < entries[parent].due else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes every entry due at or before `now` and returns their keys, each once, soonest
    /// first.
    mutating func popDue(at now: Int64) -> [Key] {
        var keys: [Key] = []
        var seen: Set<Key> = []
        while let first = entries.first, first.due <= now {
            if seen.insert(first.key).inserted { keys.append(first.key) }
            removeFirst()
        }
        return keys
    }

    private mutating func removeFirst() {
        let last = entries.removeLast()
        guard !entries.isEmpty else { return }
        entries[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < entries.count, entries[left].due < entries[smallest].due { smallest = left }
            if right < entries.count, entries[right].due < entries[smallest].due { smallest = right }
            guard smallest != parent else { return }
            entries.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
