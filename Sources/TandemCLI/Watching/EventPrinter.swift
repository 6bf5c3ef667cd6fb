import Foundation
import Tandem
import TandemPlayback

/// Prints what happens in a watched session: one JSON object a line (`--events json`) or one
/// readable line each.
final class EventPrinter: Sendable {
    let json: Bool

    init(json: Bool) { self.json = json }

    /// Clears the status line first when standard output is a terminal.
    private static let overStatusLine = isatty(1) != 0 ? "\r\u{1B}[K" : ""

    func emit(_ event: String, _ fields: [String: any Sendable]) {
        if json {
            var object: [String: Any] = ["event": event]
            for (key, value) in fields { object[key] = value }
            if let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) {
                let line = EventPrinter.escapingControls(String(decoding: data, as: UTF8.self))
                if StatusArea.shared.isActive { StatusArea.shared.printAbove(line) } else { printOutput(line) }
            }
        } else {
            // Names, reasons and item names come from peers: no control character of theirs
            // reaches the terminal.
            let details = TerminalText.sanitized(fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
            // At a terminal, over the status line (and the chat prompt), which are drawn again after.
            if StatusArea.shared.isActive {
                StatusArea.shared.printAbove("\(event) \(details)")
            } else {
                printOutput("\(EventPrinter.overStatusLine)\(event) \(details)")
            }
        }
    }

    /// `json` with DEL, the C1 controls and the bidirectional controls written as `\u` escapes:
    /// JSON allows them raw inside strings, but a terminal showing the line would act on them.
    /// (The serializer escapes C0 already; outside strings JSON has none of these.)
    static func escapingControls(_ json: String) -> String {
        guard json.unicodeScalars.contains(where: { $0.value >= 0x7F && $0.value <= 0x9F || (0x202A...0x202E).contains($0.value)
            || (0x2066...0x2069).contains($0.value) }) else { return json }
        var result = ""
        for scalar in json.unicodeScalars {
            switch scalar.value {
            case 0x00...0x1F, 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069:
                result += String(format: "\\u%04x", scalar.value)
            default:
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    func report<Activity: GroupActivity>(_ event: PlaybackCoordinator.Event, session: GroupSession<Activity>) {
        func name(_ id: UUID) -> String {
            let active = session.activeParticipants
            return (active.first { $0.id == id } ?? session.participant(identifiedBy: id))?.name(among: active) ?? id.uuidString
        }
        switch event {
        case .timelineChanged(let timeline, let originator, let proposal):
            var fields = fields(timeline) + ["by": name(originator), "change": EventPrinter.describe(proposal)]
            // The report that completed a gated play (`PrerollGate`): this version starts the play
            // at its real start, before the provisional version `completes` (anchored at the
            // gate's deadline), which never takes effect.
            if case .prerolled(let version) = proposal { fields["completes"] = Int(clamping: version) }
            emit("timeline", fields)
        case .groupWaiting(let timeline, let suspensions):
            emit("waiting", fields(timeline) + ["for": suspensions.map { "\(name($0.participant)): \($0.reason)" }])
        case .groupResumed(let timeline, let originator):
            emit("resumed", fields(timeline) + ["by": name(originator)])
        case .itemMismatch(let item, let identities):
            emit("item-mismatch", ["item": item, "participants": identities.keys.map(name).sorted(),
                                   "message": "participants play different files under the name \(item)"])
        case .proposalRejected(let rejection, let originator, let order):
            emit("rejected", ["by": name(originator), "order": Int(clamping: order), "reason": rejection.reason.description,
                              "message": "skipped a change: \(rejection.detail)"])
        case .itemEnded(let timeline, let next, let index):
            emit("item-ended", fields(timeline) + ["identifier": next?.identifier ?? timeline.item ?? "", "index": index ?? -1,
                                             "change": next == nil ? "end of item: paused" : "end of item: next"])
        case .commandAbandoned(let command):
            emit("command-abandoned", ["version": Int(clamping: command.version),
                                       "message": "the player did not complete a command by its due date"])
        case .snapshotHistory(let note):
            emit("history", ["message": "\(note)"])
        }
    }

    func followParticipants<Activity: GroupActivity>(_ session: GroupSession<Activity>) async {
        // Bodies dropped on arrival are reported alongside, for as long as participants are followed.
        let rejections = Task { await followRejections(session) }
        let away = Task { await followAway(session) }
        let relay = Task { await followRelay(session) }
        defer {
            rejections.cancel()
            away.cancel()
            relay.cancel()
        }
        var known: Set<Participant> = []
        for await participants in session.$activeParticipants.values {
            // The set empties when this participant's session ends: that is not the others leaving.
            if case .invalidated = session.state { return }
            let others = participants.filter { $0 != session.localParticipant }
            for joined in others.subtracting(known) {
                emit("participant-joined", ["name": joined.name(among: participants)])
            }
            for left in known.subtracting(others) {
                emit("participant-left", ["name": left.name(among: known)])
            }
            known = others
        }
    }

    /// `away` when the relay saw another participant's connection closed by its peer (it departs
    /// 3 s later unless it resumes), `back` when it resumed; a departure while away is reported
    /// as `participant-left` alone.
    func followAway<Activity: GroupActivity>(_ session: GroupSession<Activity>) async {
        var known: Set<Participant> = []
        for await away in session.$awayParticipants.values {
            if case .invalidated = session.state { return }
            let active = session.activeParticipants
            for gone in away.subtracting(known) {
                emit("away", ["participant": gone.id.uuidString, "name": gone.name(among: active)])
            }
            for back in known.subtracting(away) where active.contains(back) {
                emit("back", ["participant": back.id.uuidString, "name": back.name(among: active)])
            }
            known = away
        }
    }

    /// `relay` with `state` `unavailable` when a relay of a cluster says it cannot order anything
    /// (it lost NATS), `available` when it can again (issue 16).
    func followRelay<Activity: GroupActivity>(_ session: GroupSession<Activity>) async {
        var last = RelayAvailability.available
        for await availability in session.$relayAvailability.values where availability != last {
            if case .invalidated = session.state { return }
            var fields: [String: any Sendable] = ["state": availability.description]
            if case .unavailable(let reason) = availability { fields["reason"] = reason }
            emit("relay", fields)
            last = availability
        }
    }

    /// One `rejected` event for each body the session dropped on arrival: why, its signer or
    /// whom the relay named (an identity), and what it arrived as.
    func followRejections<Activity: GroupActivity>(_ session: GroupSession<Activity>) async {
        for await rejection in session.rejections {
            emit("rejected", ["reason": rejection.reason.rawValue, "sender": rejection.sender?.uuidString ?? "unknown",
                              "path": rejection.path])
        }
    }

    private func fields(_ timeline: SharedTimeline) -> [String: any Sendable] {
        ["version": Int(clamping: timeline.version), "rate": timeline.rate, "media_time": Double(timeline.anchorMediaTime.nanoseconds) / 1e9,
         "effective_session_ns": Int(timeline.anchorSessionTime.nanoseconds), "item": timeline.item ?? ""]
    }

    /// A proposal in a few words, for events and the status line.
    static func describe(_ proposal: PlaybackProposal) -> String {
        switch proposal {
        case .setRate(let rate): rate == 1 ? "play" : "rate \(rate)"
        case .pause: "pause"
        case .seek(let time): String(format: "seek %.3f", Double(time.nanoseconds) / 1e9)
        case .transition(let item, _): "item \(item)"
        case .beginSuspension(_, let reason, _, _): "suspend (\(reason))"
        case .endSuspension: "end suspension"
        case .state: "state"
        case .departed: "departed"
        case .setRateImmediately(let rate): "play now at rate \(rate)"
        case .seekImmediately(let time): String(format: "seek now %.3f", Double(time.nanoseconds) / 1e9)
        case .prerolled(let version): "pre-rolled for v\(version)"
        case .queue(let change): EventPrinter.describe(change)
        }
    }
}

private func + (lhs: [String: any Sendable], rhs: [String: any Sendable]) -> [String: any Sendable] {
    lhs.merging(rhs) { _, new in new }
}

extension EventPrinter {
    /// A queue change in a few words.
    static func describe(_ change: PlaybackQueue.Change) -> String {
        switch change {
        case .append(let entry): "queue add \(entry.identifier)"
        case .insert(let entry, _): "queue insert \(entry.identifier)"
        case .remove: "queue remove"
        case .move: "queue move"
        case .next: "next"
        case .previous: "prev"
        case .jump: "queue jump"
        case .replaceCurrent(let entry): "item \(entry.identifier)"
        case .setActionAtItemEnd(let action): "at item end: \(action.rawValue)"
        }
    }
}
