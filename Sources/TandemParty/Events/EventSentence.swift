import Foundation

/// Events in the words of the people watching: "Ben joined", "Ana paused at 12:03", "Ana
/// seeked to 1:02:03", "Ana set the rate to 1.5×". Pure: an event in, a sentence out (nil for
/// an event that is for programs only: the counts, the clock, the player's bookkeeping).
///
/// Names, items and reasons come from peers: the sentences hold them as they are, and a front
/// showing them at a terminal takes their control characters out.
public enum EventSentence {
    /// What a timeline change was, read from its `change` words (`WatchPartyEvent.describe`).
    public enum Action: Sendable, Equatable {
        /// A play at rate 1 (`play`).
        case play
        /// A rate other than 1 (`rate R`), or a play at once at a rate (`play now at rate R`).
        case rate(Double)
        /// A pause.
        case pause
        /// A seek (`seek S`, `seek now S`, and a suspension ended at a position).
        case seek
        /// The group moved to an item (`item NAME`).
        case item(String)
        /// The next or the previous item of the queue.
        case next, previous
        /// An entry added to the queue (`queue add NAME`, `queue insert NAME`).
        case queued(String)
        /// Another change of the queue (`queue remove`, `queue move`, `queue jump`, `at item end: …`).
        case queueChanged
        /// A gated play's real start (`pre-rolled for vN`): the play `completes` names, not a change of its own.
        case prerolled
        /// Bookkeeping with no sentence: a state report, a suspension, a departure.
        case bookkeeping

        /// The action a `change` describes.
        public init(change: String) {
            let words = change.split(separator: " ", maxSplits: 1).map(String.init)
            let rest = words.count > 1 ? words[1] : ""
            switch words.first ?? "" {
            case "play" where rest.isEmpty: self = .play
            case "play":
                let rate = Double(rest.split(separator: " ").last ?? "") ?? 1
                self = rate == 1 ? .play : .rate(rate)
            case "rate": self = .rate(Double(rest) ?? 1)
            case "pause": self = .pause
            case "seek": self = .seek
            case "item": self = .item(rest)
            case "next": self = .next
            case "prev": self = .previous
            case "queue" where rest.hasPrefix("add ") || rest.hasPrefix("insert "):
                self = .queued(String(rest.split(separator: " ", maxSplits: 1).last ?? ""))
            case "queue", "at": self = .queueChanged
            case "pre-rolled": self = .prerolled
            case "end" where change == "end suspension": self = .seek
            default: self = .bookkeeping
            }
        }
    }

    /// The sentence for a change `by` made, with `timeline` the group's timeline after it and
    /// `previousRate` its rate before (nil when not known): "Ana paused at 12:03".
    public static func change(_ action: Action, by name: String, timeline: WatchPartyEvent.Timeline, previousRate: Double?) -> String? {
        let position = clock(timeline.mediaTime)
        switch action {
        case .play:
            // Back to 1 while playing is a change of rate, not a start.
            if let previousRate, previousRate > 0, previousRate != 1 { return "\(name) set the rate to 1×" }
            return "\(name) played from \(position)"
        case .rate(let rate):
            if let previousRate, previousRate == 0 { return "\(name) played from \(position) at \(self.rate(rate))" }
            return "\(name) set the rate to \(self.rate(rate))"
        case .pause: return "\(name) paused at \(position)"
        case .seek: return "\(name) seeked to \(position)"
        case .item(let item): return "\(name) switched to \(item)"
        case .next: return "\(name) moved to the next item"
        case .previous: return "\(name) moved to the previous item"
        case .queued(let item): return "\(name) added \(item) to the queue"
        case .queueChanged: return "\(name) changed the queue"
        case .prerolled, .bookkeeping: return nil
        }
    }

    /// The sentence for an event that needs nothing else to be told; nil for the timeline's
    /// changes (`change(_:by:timeline:previousRate:)`), for `joined`, `left` and `history` (a
    /// narrator sums them up), and for what is for programs only.
    public static func sentence(for event: WatchPartyEvent) -> String? {
        switch event {
        case .participantJoined(let participant): "\(participant.name) joined"
        case .participantLeft(let participant): "\(participant.name) left"
        case .away(let presence): "\(presence.name)'s connection dropped; they leave in 3 s unless it comes back"
        case .back(let presence): "\(presence.name) is back"
        case .waiting(_, let waiting): "waiting for " + list(waiting.waitingFor.map(suspension))
        case .resumed(let timeline, let resumed):
            timeline.rate > 0 ? "\(resumed.by) is ready: playing on from \(clock(timeline.mediaTime))" : "\(resumed.by) is ready"
        case .holdExpired(let timeline, let expired): holdExpired(expired, timeline: timeline)
        case .notice(let notice): self.notice(notice)
        case .itemEnded(_, let ended):
            ended.change == "end of item: next" ? "on to \(ended.identifier)" : "\(ended.identifier) ended; paused at its end"
        case .item(let item): item.index >= 0 ? "now on \(item.identifier) (item \(item.index + 1) of \(item.count))" : "now on \(item.identifier)"
        case .itemMismatch(let mismatch): "\(list(mismatch.participants)) have different files under the name \(mismatch.item)"
        case .proposalRejected(let rejected): "\(rejected.by)'s change was not made: \(rejected.message.removingPrefix("skipped a change: "))"
        case .bodyRejected(let rejected):
            "dropped \(rejected.count == 1 ? "a message" : "\(rejected.count) messages") that failed the session's checks (\(rejected.reason))"
        case .commandAbandoned: "the player did not carry out a change in time; it follows the group from here"
        case .chat(let chat): "\(chat.from): \(chat.text)"
        case .latencyOffset(let offset): "your latency offset is \(offset.milliseconds) ms"
        case .stall(let stall): "stalling for \(seconds(stall.seconds))" + (stall.waits ? " (the group waits)" : " (the group plays on)")
        case .stallEnded: "the stall is over"
        case .stalled: "your player ran out of frames; catching up"
        case .stallRecovered: "your player caught up"
        case .throttle(let throttle): "decoding \(number(throttle.factor))× slower for \(seconds(throttle.seconds))"
        case .throttleEnded: "decoding at full speed again"
        case .unmatchedMedia(let unmatched): unmatched.message
        case .error(let error): error.message
        case .streaming(let streaming):
            streaming.holders.isEmpty ? "streaming \(streaming.item)" : "streaming \(streaming.item) from \(list(streaming.holders))"
        case .streamSuspended: "nobody who has the file is here any more; waiting for one of them"
        case .streamResumed: "someone who has the file is back; streaming again"
        case .streamRejectedHolder(let rejected): "\(rejected.holder)'s copy is not the group's file; not streaming from them"
        case .mpvExited: "mpv closed"
        case .relay(let relay):
            relay.state == "available" ? "the relay orders changes again"
                : "the relay cannot order changes now" + (relay.reason.map { ": \($0)" } ?? "")
        case .relayDivergence(let divergence):
            "the relay showed you and \(divergence.with) different changes (order \(divergence.order)): it cannot be trusted with this party"
        case .relayTimeJump(let jump): timeJump(jump)
        case .roles(let roles): rolesSentence(roles)
        case .joined, .left, .history, .timeline, .statistics, .mpvStatistics, .sync, .health, .other: nil
        }
    }

    /// The group stopped waiting for someone: "stopped waiting for Ben (catching up) after 15 s:
    /// playing on from 12:03", or "…: still waiting for others" while another suspension holds
    /// the group, or "…" alone when the group is paused.
    public static func holdExpired(_ expired: WatchPartyEvent.HoldExpired, timeline: WatchPartyEvent.Timeline) -> String {
        let stopped = "stopped waiting for \(expired.participant) (\(reason(expired.reason))) after \(seconds(expired.seconds))"
        if expired.stillWaiting { return stopped + ": still waiting for others" }
        return timeline.rate > 0 ? stopped + ": playing on from \(clock(timeline.mediaTime))" : stopped
    }

    /// A notice shown here (`GroupSession.showNotice(_:)`): who did what, "Ana played", "Ana
    /// added Here comes the sun to the queue".
    public static func notice(_ notice: WatchPartyEvent.Notice) -> String {
        notice.action.isEmpty ? notice.by : "\(notice.by) \(notice.action)"
    }

    /// "12:03", "1:02:03": a media time as people read it, to the second (rounded down).
    public static func clock(_ seconds: Double) -> String {
        let total = seconds.isFinite ? Int(max(0, min(seconds, 1e9))) : 0
        let (hours, minutes, rest) = (total / 3600, total / 60 % 60, total % 60)
        return hours > 0 ? String(format: "%d:%02d:%02d", hours, minutes, rest) : String(format: "%d:%02d", minutes, rest)
    }

    /// "1.5×", "1×", "0.25×": a rate with no more digits than it has.
    public static func rate(_ rate: Double) -> String { number(rate) + "×" }

    /// "Ana", "Ana and Ben", "Ana, Ben and Cy".
    public static func list(_ names: [String]) -> String {
        guard names.count > 1 else { return names.first ?? "" }
        return names.dropLast().joined(separator: ", ") + " and " + names[names.count - 1]
    }

    /// A waiting suspension, `NAME: REASON`, as "NAME (catching up)".
    static func suspension(_ entry: String) -> String {
        guard let split = entry.range(of: ": ", options: .backwards) else { return entry }
        return "\(entry[..<split.lowerBound]) (\(reason(String(entry[split.upperBound...]))))"
    }

    /// A suspension's reason in words.
    public static func reason(_ raw: String) -> String {
        switch raw {
        case "stallRecovery": "catching up"
        case "userIsChangingCurrentTime": "moving through the film"
        case "userActionRequired": "needs to do something"
        case "playingInterstitial": "playing something else"
        case "coordinatedPlaybackNotPossible": "cannot play in step"
        default: raw
        }
    }

    /// The relay's time jumped ahead of this participant's clock: "the relay's time jumped 2.5 s
    /// ahead of your clock (order 57): it cannot be trusted with this party's timing", or for a
    /// count "the relay's time jumped ahead of your clock 4 more times (up to 2.5 s, the last at
    /// order 80)".
    public static func timeJump(_ jump: WatchPartyEvent.RelayTimeJump) -> String {
        let ahead = seconds(Double(jump.aheadMilliseconds) / 1_000)
        if jump.count == 1 {
            return "the relay's time jumped \(ahead) ahead of your clock (order \(jump.order)): it cannot be trusted with this party's timing"
        }
        return "the relay's time jumped ahead of your clock \(jump.count) more times (up to \(ahead), the last at order \(jump.order))"
    }

    private static func number(_ value: Double) -> String {
        guard value.isFinite else { return "\(value)" }
        var text = String(format: "%.2f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    private static func seconds(_ value: Double) -> String { "\(number(value)) s" }
}

extension String {
    fileprivate func removingPrefix(_ prefix: String) -> String { hasPrefix(prefix) ? String(dropFirst(prefix.count)) : self }
}
