import TandemClock

/// AVFoundation's `reapplyCurrentItemStateToPlaybackControlDelegate()`: the player lost its state
/// (it was rebuilt, its decoder reset) and asks to be told again what the group does.
extension CoordinatorMachine {
    /// What to do when the player asks for the current state again.
    public enum ReapplyDirective: Sendable, Equatable {
        /// Issue the player this command.
        case issue(IssuedCommand)
        /// Call `onTick(now:)` at this instant.
        case wake(at: HostInstant)
    }

    /// The player is issued the current timeline afresh, as to a player whose position is
    /// unknown: a seek to where the group is (or will be, a pre-roll ahead while it plays), then
    /// the play or the pause. While this participant is suspended nothing is issued (its player
    /// is its own until the suspension ends, which issues it the timeline anyway).
    public mutating func onReapply(now: HostInstant) -> [ReapplyDirective] {
        follow(from: nil, originator: nil, lead: configuration.prerollLead, now: now).map {
            switch $0 {
            case .issue(let issued): .issue(issued)
            case .wake(let instant): .wake(at: instant)
            case .abandon, .emit, .propose: preconditionFailure("not from follow")
            }
        }
    }
}

extension CoordinatorMachine.ReapplyDirective: CoordinatorDirective {
    var directive: CoordinatorMachine.Directive {
        switch self {
        case .issue(let issued): .issue(issued)
        case .wake(let instant): .wake(at: instant)
        }
    }
}
