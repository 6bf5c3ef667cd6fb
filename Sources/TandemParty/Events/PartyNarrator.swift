import Foundation
import TandemClock

/// Tells a watch party to the person in it, as sentences (`EventSentence`): each change as it
/// happens, credited to whoever proposed it (a gated play's real start, which another
/// participant's pre-roll report completes, stays the proposer's), and, on joining, where the
/// group is in one line rather than its history replayed line by line.
///
/// Pure: it takes the party's events and the instants they came at, and returns the lines to
/// print. On joining it catches up: the events that say where the group is (its timeline, who is
/// here) are taken in silently until the coordinator has handed over the group's history and
/// nothing more came for `settle`, or `catchUpLimit` after `joined` at the latest; then one line
/// sums the group up ("Ana and Ben are here; paused at 12:03 (Ana paused it)"). The front calls
/// `tick(at:position:)` at `nextWake`.
public struct PartyNarrator: Sendable {
    /// How long nothing must come, once the coordinator coordinates, before the history is taken
    /// as told: it arrives as one burst.
    public static let settle = TimeSpan.milliseconds(400)
    /// The longest catching up lasts after `joined`, whatever comes.
    public static let catchUpLimit = TimeSpan.seconds(8)

    private enum Phase: Sendable {
        /// Before `joined`: what comes is told as it comes.
        case beforeJoining
        /// Taking in where the group is.
        case catchingUp(joinedAt: LocalInstant, coordinatingSince: LocalInstant?, lastEventAt: LocalInstant)
        /// Told as it comes.
        case live
    }

    private var phase = Phase.beforeJoining
    /// The others here, by name (said in alphabetical order, as the status line names them).
    private var others: [String] = []
    /// The group's timeline as last announced.
    private var timeline: WatchPartyEvent.Timeline?
    /// Whom the group waits for, while it waits.
    private var waitingFor: [String]?
    /// The last change a person made, in short ("Ana paused it"), for the catching-up line.
    private var credit: String?

    /// The last change a person made, as its sentence ("Ana paused at 12:03"): what the status
    /// line shows as who did what last. Nil before any.
    public private(set) var lastAction: String?
    /// Whether joining is followed by catching up on the group's history.
    private let catchesUp: Bool

    /// A narrator that has seen nothing yet. `catchesUp` false for a participant that started
    /// the session (it has no history to catch up on): where the group is is said as it joins.
    public init(catchesUp: Bool = true) { self.catchesUp = catchesUp }

    /// Whether it is still taking in where the group is.
    public var isCatchingUp: Bool {
        if case .catchingUp = phase { return true }
        return false
    }

    /// Whether `joined` came.
    public var hasJoined: Bool {
        if case .beforeJoining = phase { return false }
        return true
    }

    /// When `tick(at:position:)` is due: the end of catching up; nil once live.
    public var nextWake: LocalInstant? {
        guard case .catchingUp(let joinedAt, let since, let last) = phase else { return nil }
        let limit = joinedAt + Self.catchUpLimit
        guard let since else { return limit }
        return min(limit, max(since, last) + Self.settle)
    }

    /// The coordinator coordinates with the session from `now`: the group's history follows, as
    /// one burst of events.
    public mutating func coordinationBegan(at now: LocalInstant) {
        guard case .catchingUp(let joinedAt, nil, let last) = phase else { return }
        phase = .catchingUp(joinedAt: joinedAt, coordinatingSince: now, lastEventAt: last)
    }

    /// Takes `event`, come at `now`; returns the lines to print for it (none while catching up
    /// on where the group is).
    public mutating func take(_ event: WatchPartyEvent, at now: LocalInstant) -> [String] {
        switch phase {
        case .beforeJoining:
            if case .joined = event {
                guard catchesUp else {
                    phase = .live
                    return [summary(position: nil)]
                }
                phase = .catchingUp(joinedAt: now, coordinatingSince: nil, lastEventAt: now)
                return []
            }
        case .catchingUp(let joinedAt, let since, _):
            if case .left = event {
                phase = .live
                return []
            }
            if Self.saysWhereTheGroupIs(event) {
                phase = .catchingUp(joinedAt: joinedAt, coordinatingSince: since, lastEventAt: now)
                _ = follow(event)
                return []
            }
        case .live:
            break
        }
        return follow(event).map { [$0] } ?? []
    }

    /// The time has come (`nextWake`): the line that sums the group up, when catching up ends
    /// now. `position` is the group's media time now (s), when known.
    public mutating func tick(at now: LocalInstant, position: Double?) -> [String] {
        guard let wake = nextWake, now >= wake else { return [] }
        phase = .live
        return [summary(position: position)]
    }

    /// "Ana and Ben are here; paused at 12:03 (Ana paused it)".
    public func summary(position: Double?) -> String {
        let here = others.isEmpty ? "nobody else is here yet"
            : "\(EventSentence.list(others.sorted())) \(others.count == 1 ? "is" : "are") here"
        let state: String
        if let waitingFor {
            state = "waiting for " + EventSentence.list(waitingFor.map(EventSentence.suspension))
        } else if let timeline, timeline.rate > 0 {
            let at = position.map { " at \(EventSentence.clock($0))" } ?? ""
            state = "playing\(at)" + (timeline.rate == 1 ? "" : ", \(EventSentence.rate(timeline.rate))")
        } else {
            state = "paused at \(EventSentence.clock(timeline?.mediaTime ?? 0))"
        }
        return "\(here); \(state)" + (credit.map { " (\($0))" } ?? "")
    }

    /// The events that say where the group is: taken in silently while catching up.
    private static func saysWhereTheGroupIs(_ event: WatchPartyEvent) -> Bool {
        switch event {
        case .participantJoined, .participantLeft, .away, .back, .timeline, .waiting, .resumed, .itemEnded, .item, .history: true
        default: false
        }
    }

    /// Follows `event` and returns its sentence, if it has one.
    private mutating func follow(_ event: WatchPartyEvent) -> String? {
        switch event {
        case .participantJoined(let participant):
            others.append(participant.name)
        case .participantLeft(let participant):
            others.removeAll { $0 == participant.name }
        case .timeline(let timeline, let change):
            let previousRate = self.timeline?.rate
            self.timeline = timeline
            waitingFor = nil
            let action = EventSentence.Action(change: change.change)
            guard let sentence = EventSentence.change(action, by: change.by, timeline: timeline, previousRate: previousRate) else {
                return nil
            }
            lastAction = sentence
            credit = Self.credit(action, by: change.by, timeline: timeline) ?? credit
            return sentence
        case .waiting(let timeline, let waiting):
            self.timeline = timeline
            waitingFor = waiting.waitingFor
        case .resumed(let timeline, _), .itemEnded(let timeline, _):
            self.timeline = timeline
            waitingFor = nil
        case .notice(let notice):
            // What the program showed is the last thing that happened here, as a change is.
            let sentence = EventSentence.notice(notice)
            lastAction = sentence
            return sentence
        case .holdExpired(let timeline, let expired):
            self.timeline = timeline
            waitingFor = expired.stillWaiting ? waitingFor?.filter { !$0.hasPrefix("\(expired.participant): ") } : nil
        default:
            break
        }
        return EventSentence.sentence(for: event)
    }

    /// A change in short, for the line that sums the group up.
    private static func credit(_ action: EventSentence.Action, by name: String, timeline: WatchPartyEvent.Timeline) -> String? {
        switch action {
        case .play: "\(name) started it"
        case .rate(let rate): "\(name) set the rate to \(EventSentence.rate(rate))"
        case .pause: "\(name) paused it"
        case .seek: "\(name) seeked to \(EventSentence.clock(timeline.mediaTime))"
        case .item, .next, .previous: "\(name) chose the item"
        case .queued, .queueChanged, .prerolled, .bookkeeping: nil
        }
    }
}
