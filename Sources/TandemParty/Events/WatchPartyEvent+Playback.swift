import Foundation
import TandemPlayback

extension WatchPartyEvent.Timeline {
    /// The fields of `timeline` as every participant holds it.
    public init(_ timeline: SharedTimeline) {
        self.init(version: Int(clamping: timeline.version), rate: timeline.rate,
                  mediaTime: Double(timeline.anchorMediaTime.nanoseconds) / 1e9,
                  effectiveSessionNanoseconds: timeline.anchorSessionTime.nanoseconds, item: timeline.item ?? "")
    }
}

extension WatchPartyEvent {
    /// The event that the coordinator's `event` is reported as; `name` gives a participant's
    /// name from its identifier (with its fingerprint when two share a name, even after it left).
    public init(_ event: CoordinationCore.Event, naming name: (UUID) -> String) {
        switch event {
        case .timelineChanged(let timeline, let originator, let proposal):
            // The report that completed a gated play (`PrerollGate`): this version starts the play
            // at its real start, before the provisional version `completes` (anchored at the
            // gate's deadline), which never takes effect.
            var completes: Int?
            if case .prerolled(let version) = proposal { completes = Int(clamping: version) }
            self = .timeline(Timeline(timeline), Change(by: name(originator), change: Self.describe(proposal), completes: completes))
        case .groupWaiting(let timeline, let suspensions):
            self = .waiting(Timeline(timeline), Waiting(waitingFor: suspensions.map { "\(name($0.participant)): \($0.reason)" }))
        case .groupResumed(let timeline, let originator):
            self = .resumed(Timeline(timeline), Resumed(by: name(originator)))
        case .holdExpired(let timeline, let suspension, let limit, let stillWaiting):
            self = .holdExpired(Timeline(timeline), HoldExpired(participant: name(suspension.participant), reason: suspension.reason.rawValue,
                                                                seconds: limit.seconds, stillWaiting: stillWaiting))
        case .itemMismatch(let item, let identities):
            self = .itemMismatch(ItemMismatch(item: item, participants: identities.keys.map(name).sorted(),
                                              message: "participants play different files under the name \(item)"))
        case .proposalRejected(let rejection, let originator, let order):
            self = .proposalRejected(ProposalRejected(by: name(originator), order: Int(clamping: order), reason: rejection.reason.description,
                                                      message: "skipped a change: \(rejection.detail)"))
        case .itemEnded(let timeline, let next, let index):
            self = .itemEnded(Timeline(timeline), ItemEnded(identifier: next?.identifier ?? timeline.item ?? "", index: index ?? -1,
                                                            change: next == nil ? "end of item: paused" : "end of item: next"))
        case .commandAbandoned(let command):
            self = .commandAbandoned(CommandAbandoned(version: Int(clamping: command.version),
                                                      message: "the player did not complete a command by its due date"))
        case .snapshotHistory(let note):
            self = .history(Message(message: "\(note)"))
        case .requestRefused(_, let reason):
            self = .error(Message(message: "a change was not sent: \(reason)"))
        }
    }

    /// A proposal in a few words, for events and the status line.
    public static func describe(_ proposal: PlaybackProposal) -> String {
        switch proposal {
        case .setRate(let rate): rate == 1 ? "play" : "rate \(rate)"
        case .pause: "pause"
        case .seek(let time, _): String(format: "seek %.3f", Double(time.nanoseconds) / 1e9)
        case .transition(let item, _): "item \(item)"
        case .beginSuspension(_, let reason, _, _): "suspend (\(reason))"
        case .endSuspension: "end suspension"
        case .state: "state"
        case .departed: "departed"
        case .setRateImmediately(let rate): "play now at rate \(rate)"
        case .seekImmediately(let time, _): String(format: "seek now %.3f", Double(time.nanoseconds) / 1e9)
        case .prerolled(let version): "pre-rolled for v\(version)"
        case .queue(let change): describe(change)
        case .pauseSnapping(let snaps): "pauses snap \(snaps ? "on" : "off")"
        case .maximumHold(let cap): cap.map { String(format: "maximum hold %g s", $0.seconds) } ?? "maximum hold default"
        }
    }

    /// A queue change in a few words.
    public static func describe(_ change: PlaybackQueue.Change) -> String {
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
