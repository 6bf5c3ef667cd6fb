import Synchronization
import TandemClock

/// The pure decision of an output that writes ahead of what plays: when the timeline changes at
/// an instant whose frames are already written, from which frame it writes again, and from which
/// earlier render it renders again.
///
/// The output remembers where each of its renders started (`Starts`: the stream frame and the
/// instant it gave for it). A change at stream frame `change` is rewritten from there, but never
/// from before `safe`, the first frame the server cannot have taken yet (its read index, moved
/// on by the time since its report, and a margin). The renderer's state is kept only at the start
/// of each render, so it renders again from the latest start at or before that frame, and the
/// frames between that start and the rewrite's first frame are rendered only to bring its state
/// there (they are the same as those written, the timelines agreeing before the change).
struct OutputRewrite: Sendable, Equatable {
    /// Where one render started.
    struct Start: Sendable, Equatable {
        /// Its first stream frame.
        var frame: Int64
        /// The instant given for it.
        var instant: LocalInstant
    }

    /// The latest render starts, oldest first, in storage reserved once (appending allocates
    /// nothing): a ring of `capacity`, the oldest dropped.
    struct Starts: Sendable, Equatable {
        private(set) var entries: [Start] = []
        let capacity: Int

        init(capacity: Int = 32) {
            self.capacity = capacity
            entries.reserveCapacity(capacity)
        }

        /// Records a render's start, forgetting the starts at or past its frame (rendered over).
        mutating func add(_ start: Start) {
            forget(from: start.frame)
            if entries.count == capacity { entries.removeFirst() }
            entries.append(start)
        }

        /// Forgets the starts at or past `frame`.
        mutating func forget(from frame: Int64) {
            while let last = entries.last, last.frame >= frame { entries.removeLast() }
        }

        /// Forgets every start.
        mutating func removeAll() { entries.removeAll(keepingCapacity: true) }
    }

    /// The render to resume from.
    var start: Start
    /// The first frame written again (at or after `start.frame`).
    var from: Int64

    /// What to rewrite for a change at stream frame `change`, `written` frames having been
    /// written, the server possibly having taken every frame before `safe`: nil when nothing
    /// written is to change (the change's frame, or the safe frame, is not yet written), or no
    /// kept start is at or before it, or it would render again more than `maximumFrames`.
    static func plan(starts: Starts, written: Int64, safe: Int64, change: Int64, maximumFrames: Int) -> OutputRewrite? {
        let target = max(change, safe)
        guard target < written, let start = starts.entries.last(where: { $0.frame <= target }),
              written - start.frame <= Int64(maximumFrames) else { return nil }
        return OutputRewrite(start: start, from: max(start.frame, safe))
    }
}

extension TimelineSchedule {
    /// The earliest instant, not before `earliest`, at which this schedule puts a different
    /// entry (timeline or generation) in force than `other`; nil when they agree from `earliest`
    /// on. Schedules that differ only in which changes have come into force agree.
    func firstDifference(from other: TimelineSchedule, notBefore earliest: HostInstant) -> HostInstant? {
        var first: HostInstant?
        func check(_ instant: HostInstant) {
            guard instant >= earliest, first.map({ instant < $0 }) ?? true else { return }
            if entry(at: instant) != other.entry(at: instant) { first = instant }
        }
        check(earliest)
        for entry in pending { check(entry.timeline.anchorHostTime) }
        for entry in other.pending { check(entry.timeline.anchorHostTime) }
        return first
    }

    /// The entry in force at `instant`, by the changes scheduled.
    func entry(at instant: HostInstant) -> Entry {
        var found = current
        for entry in pending where entry.timeline.anchorHostTime <= instant { found = entry }
        return found
    }
}

/// Joins an output that writes ahead to the renderer that fills it, so that a change heard after
/// its frames were written is written again: the output hands it to its owner (its `opened`
/// event), the renderer connects to it, and the output's thread asks through it.
final class OutputRewriting: Sendable {
    /// What the renderer answers.
    struct Renderer: Sendable {
        /// The local instant, not before the one given, from which the timeline now differs from
        /// the one the renderer last rendered under; nil when it does not (or cannot tell now).
        var change: @Sendable (LocalInstant) -> LocalInstant?
        /// Puts the renderer back in its state at the start of the render that started at the
        /// instant given; false when it kept none.
        var resume: @Sendable (LocalInstant) -> Bool
    }

    private let renderer = Mutex<Renderer?>(nil)

    init() {}

    /// From now on the output asks `renderer`.
    func connect(_ renderer: Renderer) {
        self.renderer.withLock { $0 = renderer }
    }

    /// The renderer's answer (see `Renderer.change`); nil when none is connected.
    func change(notBefore earliest: LocalInstant) -> LocalInstant? {
        guard let renderer = renderer.withLock({ $0 }) else { return nil }
        return renderer.change(earliest)
    }

    /// The renderer's answer (see `Renderer.resume`); false when none is connected.
    func resume(at instant: LocalInstant) -> Bool {
        guard let renderer = renderer.withLock({ $0 }) else { return false }
        return renderer.resume(instant)
    }
}
