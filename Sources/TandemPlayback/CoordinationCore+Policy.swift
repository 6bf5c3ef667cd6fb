import Foundation
import Tandem

// Who may change playback: the session's policy (`SessionPolicy.playback`), applied to every
// ordered proposal with the roles as they stood before its order, so that every participant
// (a late joiner replaying the history too) skips the same ones, and checked by the coordinator
// before it proposes, so that a participant the policy leaves out is told why at once.
extension PlaybackProposal {
    /// What the proposal does to playback in a word or two ("pause", "seek"), nil for what
    /// stays everyone's under any policy: one's own suspensions, what one loaded, pre-roll, a
    /// departure. A suspension's end that proposes a time moves the group (scrubbing): it is a
    /// seek.
    public var playbackAction: String? {
        switch self {
        case .setRate(let rate), .setRateImmediately(let rate): rate > 0 ? "play" : "pause"
        case .pause: "pause"
        case .seek, .seekImmediately: "seek"
        case .transition: "change the item"
        case .queue: "change the queue"
        case .pauseSnapping: "change how pauses snap"
        case .maximumHold: "change how long the group waits"
        case .endSuspension(_, let time, _): time == nil ? nil : "seek"
        case .beginSuspension, .state, .departed, .prerolled: nil
        }
    }

    /// The rejection every participant gives this proposal from `originator` under `roles`, nil
    /// when the roles let it through. `operatorNames` lists the operators for people (empty in
    /// the ordered path, whose words must not depend on who knows whose name).
    public func policyRejection(from originator: UUID, under roles: SessionRoles,
                                operatorNames: [String] = []) -> ProposalRejection? {
        guard let action = playbackAction, !roles.mayChangePlayback(originator) else { return nil }
        let who: String
        switch operatorNames.count {
        case 0: who = ""
        case 1: who = " (\(operatorNames[0]) is an operator)"
        default: who = " (the operators are \(operatorNames.joined(separator: ", ")))"
        }
        return ProposalRejection(.notPermitted, "only operators may \(action)\(who)")
    }

    /// The proposal as every participant applies it from `originator` under `roles`: a
    /// suspension's end from a participant the policy leaves out ends the suspension where the
    /// group is, without the time it proposed.
    func withoutControl(from originator: UUID, under roles: SessionRoles) -> PlaybackProposal {
        guard case .endSuspension(let id, .some, let item) = self, !roles.mayChangePlayback(originator) else { return self }
        return .endSuspension(id: id, proposedTime: nil, item: item)
    }
}

extension OrderedInput {
    /// The input as the coordinator must take it under `roles` (the roles before its order): a
    /// proposal the policy refuses becomes an unreadable one with the `.notPermitted` rejection
    /// (skipped, the version advancing, the same event everywhere); everything else is as it was.
    public func permitted(by roles: SessionRoles) -> OrderedInput {
        guard case .proposal(var ordered) = self else { return self }
        ordered.proposal = ordered.proposal.withoutControl(from: ordered.originator, under: roles)
        if let rejection = ordered.proposal.policyRejection(from: ordered.originator, under: roles) {
            return .unreadable(originator: ordered.originator, order: ordered.order, rejection: rejection)
        }
        return .proposal(ordered)
    }
}
