/// Items waiting for their due time: a binary min-heap ordered by due time, then by arrival, so
/// that items due at the same instant leave in the order they came.
struct DeliveryQueue<Item> {
    private struct Entry {
        var due: Int64
        var order: UInt64
        var item: Item

        func precedes(_ other: Entry) -> Bool {
            due != other.due ? due < other.due : order < other.order
        }
    }

    private var heap: [Entry] = []
    private var nextOrder: UInt64 = 0

    /// How many items wait.
    var count: Int { heap.count }
    /// The earliest due time, or nil when nothing waits.
    var nextDue: Int64? { heap.first?.due }

    /// Adds `item`, due at `due`.
    mutating func insert(_ item: Item, due: Int64) {
        heap.append(Entry(due: due, order: nextOrder, item: item))
        nextOrder += 1
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the earliest item if it is due by `now`.
    mutating func popDue(by now: Int64) -> (item: Item, due: Int64)? {
        guard let first = heap.first, first.due <= now else { return nil }
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1
                let right = left + 1
                var smallest = parent
                if left < heap.count, heap[left].precedes(heap[smallest]) { smallest = left }
                if right < heap.count, heap[right].precedes(heap[smallest]) { smallest = right }
                guard smallest != parent else { break }
                heap.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return (first.item, first.due)
    }

    /// Drops every item for which `shouldDrop` holds.
    mutating func removeAll(where shouldDrop: (Item) -> Bool) {
        let kept = heap.filter { !shouldDrop($0.item) }
        heap = []
        for entry in kept.sorted(by: { $0.precedes($1) }) { heap.append(entry) }
    }
}
