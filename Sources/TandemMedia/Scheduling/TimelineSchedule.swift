import TandemClock

/// The pure core of the frame scheduler: which timeline is in force, which changes are scheduled
/// for later instants, and when (if ever) a decoded frame or audio chunk is due.
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
        /// Present it at this host instant.
        case at(HostInstant)
        /// Paused on it: show it as the still picture now.
        case still
        /// Not yet known: the timeline is paused before it, or a change may move it.
        case waiting
        /// It belongs to no timeline any more (before a seek, or wholly before the position).
        case stale
    }

    private(set) var current: Entry
    /// Changes scheduled for later, in order of their instants.
    private(set) var pending: [Entry] = []

    /// Starts with `timeline` in force, timing frames of generation 0.
    init(_ timeline: PresentationTimeline) {
        current = Entry(timeline: timeline, generation: 0)
    }

    /// The generation of the newest timeline.
    var newestGeneration: Int { (pending.last ?? current).generation }

    /// The newest timeline (the last change scheduled, or the one in force).
    var newest: PresentationTimeline { (pending.last ?? current).timeline }

    /// The instant at which the next scheduled change takes over, if one is scheduled.
    var nextChange: HostInstant? { pending.first?.timeline.anchorHostTime }

    /// Schedules `timeline`: in force at once if its anchor is not in the future, otherwise from
    /// its anchor on. It supersedes every change scheduled for the same instant or later (they
    /// were decided before it). A discontinuous change starts a new generation, whose number it
    /// returns.
    @discardableResult
    mutating func schedule(_ timeline: PresentationTimeline, discontinuous: Bool, now: HostInstant) -> Int {
        let generation = discontinuous ? newestGeneration + 1 : newestGeneration
        let entry = Entry(timeline: timeline, generation: generation)
        if timeline.anchorHostTime <= now {
            current = entry
            pending.removeAll()
        } else {
            pending.removeAll { $0.timeline.anchorHostTime >= timeline.anchorHostTime }
            pending.append(entry)
        }
        return generation
    }

    /// Promotes the scheduled changes whose instants have come; returns whether any did.
    @discardableResult
    mutating func advance(to now: HostInstant) -> Bool {
        var promoted = false
        while let next = pending.first, next.timeline.anchorHostTime <= now {
            current = pending.removeFirst()
            promoted = true
        }
        return promoted
    }

    /// When a frame covering media times `start..<end` of generation `generation` is due, and
    /// the timeline that times it: the first timeline of its generation under which it falls
    /// due before the next change takes over.
    func due(start: ItemTime, end: ItemTime, generation: Int) -> (Due, PresentationTimeline?) {
        let entries = [current] + pending
        guard var index = entries.firstIndex(where: { $0.generation == generation }) else { return (.stale, nil) }
        while true {
            let timeline = entries[index].timeline
            let due = TimelineSchedule.due(start: start, end: end, on: timeline)
            guard index + 1 < entries.count else { return (due, timeline) }
            let next = entries[index + 1]
            switch due {
            case .at(let instant) where instant < next.timeline.anchorHostTime:
                return (due, timeline)
            case .still, .stale:
                return (due, timeline)
            case .at, .waiting:
                // It falls due only after the next change: that change decides, if it still
                // times this generation.
                guard next.generation == generation else { return (.stale, nil) }
                index += 1
            }
        }
    }

    /// When a frame covering media times `start..<end` is due on `timeline`: at the instant its
    /// start plays, or at the timeline's anchor for the frame that covers the anchor.
    static func due(start: ItemTime, end: ItemTime, on timeline: PresentationTimeline) -> Due {
        let position = timeline.anchorItemTime
        if end <= position { return .stale }
        guard let startInstant = timeline.hostTime(forItemTime: start) else {
            return start <= position ? .still : .waiting
        }
        return .at(max(startInstant, timeline.anchorHostTime))
    }
}
