import Synchronization

/// A ring of a fixed number of records between one writing thread and one reading thread,
/// sized at start: the sound output's thread puts a record of an event (a few numbers) into it
/// without allocating, freeing or waiting, and the log's own thread takes the records out and
/// writes their lines.
///
/// A full ring never makes the writer wait: the record is left out and counted
/// (`takeDropped()`), and the reader says how many were. A record's item (the only reference it
/// holds) is moved out of its slot by the reader, so that the writer never releases the last
/// reference to anything and so never frees.
///
/// Confinement (why `@unchecked Sendable`): a slot between the read and write indices belongs
/// to the reader, the others to the writer; each index is published with release ordering and
/// read with acquire ordering, so that a slot's contents are seen whole. At most one thread puts
/// and one takes at a time (the callers' locks see to it).
final class AudioLogRing: @unchecked Sendable {
    /// What happened.
    enum Kind: UInt8, Sendable {
        case write, snap, busy, underrun, missing, latency, priority, rewrite
    }

    /// One event: the fields its kind uses (see `AudioLog` for their meaning), the rest zero.
    struct Record: Sendable, Equatable {
        var kind: Kind
        var at: Int64 = 0
        /// A snap's error, a missing count, a latency (ns or frames, by kind); for a priority,
        /// 0 when the thread got it, else the reason (an errno).
        var value: Int64 = 0
        var intended: Int64 = 0
        var expected: Int64 = 0
        var media = 0.0
        var frames = 0
        var rate = 0.0
        var correction = 0.0
        var lead: Int64 = 0
        var item: String?

        /// An event with `at` and `value`.
        init(kind: Kind, at: Int64, value: Int64 = 0) {
            self.kind = kind
            self.at = at
            self.value = value
        }

        /// A write's record.
        init(kind: Kind, at: Int64, intended: Int64, expected: Int64, media: Double, frames: Int, rate: Double,
             correction: Double, lead: Int64, item: String?) {
            self.kind = kind
            self.at = at
            self.intended = intended
            self.expected = expected
            self.media = media
            self.frames = frames
            self.rate = rate
            self.correction = correction
            self.lead = lead
            self.item = item
        }
    }

    /// Records it holds at most.
    let capacity: Int
    private let slots: UnsafeMutablePointer<Record>
    /// Records put so far (the next slot to write is `written % capacity`).
    private let written = Atomic<Int>(0)
    /// Records taken so far.
    private let read = Atomic<Int>(0)
    private let dropped = Atomic<Int>(0)

    /// An empty ring of `capacity` records.
    init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
        slots = .allocate(capacity: capacity)
        slots.initialize(repeating: Record(kind: .busy, at: 0), count: capacity)
    }

    deinit {
        slots.deinitialize(count: capacity)
        slots.deallocate()
    }

    /// Puts `record` in; when the ring is full, leaves it out, counts it and returns false. Never waits.
    @discardableResult
    func put(_ record: Record) -> Bool {
        let next = written.load(ordering: .relaxed)
        guard next - read.load(ordering: .acquiring) < capacity else {
            dropped.wrappingAdd(1, ordering: .relaxed)
            return false
        }
        // The slot's item was moved out by the reader: this assignment releases nothing.
        slots[next % capacity] = record
        written.store(next + 1, ordering: .releasing)
        return true
    }

    /// Takes every record put so far, oldest first, handing each to `body`; returns how many.
    @discardableResult
    func take(_ body: (Record) -> Void) -> Int {
        let first = read.load(ordering: .relaxed)
        let end = written.load(ordering: .acquiring)
        for index in first..<end {
            let slot = slots + index % capacity
            let record = slot.pointee
            slot.pointee.item = nil
            body(record)
        }
        read.store(end, ordering: .releasing)
        return end - first
    }

    /// Records left out since the last call (the ring being full), and counts afresh.
    func takeDropped() -> Int {
        dropped.exchange(0, ordering: .relaxed)
    }
}
