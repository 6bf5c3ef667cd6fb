import TandemWire

/// A session's ordered broadcasts so far, oldest first, for late joiners: bounded by a count and
/// by the bytes of their bodies, dropping the oldest beyond either.
struct RelayOrderedHistory: Sendable {
    private var entries: [RelayOrderedEntry] = []
    private var head = 0
    /// The bytes of the bodies kept.
    private(set) var bodyBytes = 0

    /// How many are kept.
    var count: Int { entries.count - head }

    /// The entries kept, oldest first.
    var all: ArraySlice<RelayOrderedEntry> { entries[head...] }

    /// Keeps `entry`, then drops the oldest until at most `maximumCount` entries and
    /// `maximumBytes` of bodies are kept.
    mutating func append(_ entry: RelayOrderedEntry, maximumCount: Int, maximumBytes: Int) {
        entries.append(entry)
        bodyBytes += entry.body.count
        while head < entries.count, count > maximumCount || bodyBytes > maximumBytes {
            bodyBytes -= entries[head].body.count
            head += 1
        }
        // Compact once the dropped prefix is most of the array.
        if head > 64, head * 2 > entries.count {
            entries.removeFirst(head)
            head = 0
        }
    }
}
