/// The pure core of the frame scheduler: which timeline is in force, which one is scheduled
/// next, and when (if ever) a decoded frame or audio chunk is due.
///
/// Frames carry the *generation* of the decoding run that made them. A discontinuous change
/// (a seek) starts a new generation: frames of the old one are stale, and frames of the new one
/// follow only the timeline that asked for them. A continuous change (play, pause, a new rate)
/// keeps the generation: a frame is due under the current timeline when that falls before the
/// change takes effect, and under the new one after it.
struct TimelineSchedule: Sendable, Equatable {
    /// A timeline with the decoding generation whose frames it times.
    struct Entry: Sendable, Equatable {
        var timeline: PresentationTimeline
        var generation: Int
    }

    /// When a frame is due.
    enum Due: Equatable {
        /// Present it at this local instant.
        case at(Nanoseconds)
        /// Paused on it: show it as the still picture now.
        case still
        /// Not yet known: the timeline is paused before it, or a change may move it.
        case waiting
        /// It belongs to no timeline any more (before a seek, or wholly before the position).
        case stale
    }

    private(set) var current: Entry
    private(set) var pending: Entry?

    /// Starts with `timeline` in force, timing frames of generation 0.
    init(_ timeline: PresentationTimeline) {
        current = Entry(timeline: timeline, generation: 0)
    }

    /// The generation of the newest timeline.
    var newestGeneration: Int { (pending ?? current).generation }

    /// The newest timeline (pending if one is scheduled).
    var newest: PresentationTimeline { (pending ?? current).timeline }

    /// The instant at which the pending timeline takes over, if one is scheduled.
    var nextChange: Nanoseconds? { pending?.timeline.anchorLocalTime }

    /// Schedules `timeline`: in force at once if its anchor is not in the future, otherwise from
    /// its anchor on. It replaces any change still pending. A discontinuous change starts a new
    /// generation, whose number it returns.
    @discardableResult
    mutating func schedule(_ timeline: PresentationTimeline, discontinuous: Bool, now: Nanoseconds) -> Int {
        let generation = discontinuous ? newestGeneration + 1 : newestGeneration
        let entry = Entry(timeline: timeline, generation: generation)
        if timeline.anchorLocalTime <= now {
            current = entry
            pending = nil
        } else {
            pending = entry
        }
        return generation
    }

    /// Promotes the pending timeline once its instant has come; returns whether it did.
    @discardableResult
    mutating func advance(to now: Nanoseconds) -> Bool {
        guard let pending, pending.timeline.anchorLocalTime <= now else { return false }
        current = pending
        self.pending = nil
        return true
    }

    /// The timeline that times a frame starting at `start` of generation `generation`, and when
    /// that frame is due.
    func due(start: Nanoseconds, end: Nanoseconds, generation: Int) -> (Due, PresentationTimeline?) {
        if let pending, pending.generation == generation {
            if current.generation == generation {
                let underCurrent = TimelineSchedule.due(start: start, end: end, on: current.timeline)
                if case .at(let instant) = underCurrent, instant < pending.timeline.anchorLocalTime {
                    return (underCurrent, current.timeline)
                }
            }
            return (TimelineSchedule.due(start: start, end: end, on: pending.timeline), pending.timeline)
        }
        guard current.generation == generation else { return (.stale, nil) }
        return (TimelineSchedule.due(start: start, end: end, on: current.timeline), current.timeline)
    }

    /// When a frame covering media times `start..<end` is due on `timeline`: at the instant its
    /// start plays, or at the timeline's anchor for the frame that covers the anchor.
    static func due(start: Nanoseconds, end: Nanoseconds, on timeline: PresentationTimeline) -> Due {
        let position = timeline.anchorMediaTime
        if end <= position { return .stale }
        guard let startInstant = timeline.localTime(forMediaTime: start) else {
            return start <= position ? .still : .waiting
        }
        return .at(max(startInstant, timeline.anchorLocalTime))
    }
}
