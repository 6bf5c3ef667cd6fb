/// Deadlines keyed by an identifier, one per key, earliest first: a binary min-heap with lazy
/// removal, so that adding and removing cost O(log n) and the earliest live deadline is found
/// quickly, however many are held. A pure value: the NATS client's requests and flushes, the
/// relay core's participants (what its tick visits).
package struct Deadlines<Key: Hashable & Sendable>: Sendable {
    private var heap: [(deadline: Int64, id: Key)] = []
    private var live: [Key: Int64] = [:]

    /// No deadlines.
    package init() {}

    /// How many live deadlines there are.
    package var count: Int { live.count }

    /// Sets `id`'s deadline (replacing an earlier one).
    package mutating func set(_ id: Key, at deadline: Int64) {
        live[id] = deadline
        heap.append((deadline, id))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].deadline < heap[parent].deadline else { break }
            heap.swapAt(child, parent)
            child = parent
        }
        if heap.count > 64, heap.count > live.count * 4 { rebuild() }
    }

    /// Forgets `id`'s deadline.
    package mutating func remove(_ id: Key) { live[id] = nil }

    /// The earliest live deadline.
    package mutating func earliest() -> Int64? {
        dropStale()
        return heap.first?.deadline
    }

    /// Removes and returns the identifiers whose deadline is at or before `now`, earliest first.
    package mutating func popDue(at now: Int64) -> [Key] {
        var due: [Key] = []
        while true {
            dropStale()
            guard let first = heap.first, first.deadline <= now else { return due }
            removeFirst()
            live[first.id] = nil
            due.append(first.id)
        }
    }

    /// Forgets every deadline.
    package mutating func removeAll() {
        heap.removeAll()
        live.removeAll()
    }

    private mutating func dropStale() {
        while let first = heap.first, live[first.id] != first.deadline { removeFirst() }
    }

    private mutating func rebuild() {
        heap = live.map { ($0.value, $0.key) }.sorted { $0.deadline < $1.deadline }
    }

    private mutating func removeFirst() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { return }
            var smallest = left
            if left + 1 < heap.count, heap[left + 1].deadline < heap[left].deadline { smallest = left + 1 }
            guard heap[smallest].deadline < heap[parent].deadline else { return }
            heap.swapAt(smallest, parent)
            parent = smallest
        }
    }
}
