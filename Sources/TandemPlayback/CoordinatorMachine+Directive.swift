import TandemClock

extension CoordinatorMachine {
    /// Any directive of the machine, whichever handler returned it: what a shell carries out.
    ///
    /// Each handler keeps its own directive enum beside it (what it can return, and no more);
    /// this is the one place where they meet, so that `PlaybackCoordinator` and a test's driver
    /// of the machine (`WaitingRelayTests`' `MachinePeer`) carry out the same set the same way.
    enum Directive: Sendable, Equatable {
        /// Send this proposal for ordering.
        case propose(PlaybackProposal)
        /// Issue this command to the player.
        case issue(IssuedCommand)
        /// The command in flight is past its due date: it is abandoned.
        case abandon(IssuedCommand)
        /// Tell the program.
        case emit(CoordinationCore.Event)
        /// Call `onTick(now:)` at this host instant.
        case wake(at: HostInstant)
        /// Publish this snapshot of the coordination state.
        case publishSnapshot(CoordinationSnapshot)
    }
}

/// A handler's directive, as any directive of the machine.
protocol CoordinatorDirective: Sendable {
    /// The directive as `CoordinatorMachine.Directive`.
    var directive: CoordinatorMachine.Directive { get }
}

extension CoordinatorMachine.OrderedDirective: CoordinatorDirective {
    var directive: CoordinatorMachine.Directive {
        switch self {
        case .emit(let event): .emit(event)
        case .issue(let issued): .issue(issued)
        case .wake(let instant): .wake(at: instant)
        case .publishSnapshot(let snapshot): .publishSnapshot(snapshot)
        case .propose(let proposal): .propose(proposal)
        }
    }
}

extension CoordinatorMachine.TickDirective: CoordinatorDirective {
    var directive: CoordinatorMachine.Directive {
        switch self {
        case .abandon(let issued): .abandon(issued)
        case .emit(let event): .emit(event)
        case .issue(let issued): .issue(issued)
        case .wake(let instant): .wake(at: instant)
        case .publishSnapshot(let snapshot): .publishSnapshot(snapshot)
        }
    }
}

extension CoordinatorMachine.ClockMappingDirective: CoordinatorDirective {
    var directive: CoordinatorMachine.Directive {
        switch self {
        case .issue(let issued): .issue(issued)
        case .wake(let instant): .wake(at: instant)
        }
    }
}

extension CoordinatorMachine.CompletionDirective: CoordinatorDirective {
    var directive: CoordinatorMachine.Directive {
        switch self {
        case .issue(let issued): .issue(issued)
        case .wake(let instant): .wake(at: instant)
        case .propose(let proposal): .propose(proposal)
        }
    }
}

extension CoordinatorMachine.LocalRequestDirective: CoordinatorDirective {
    var directive: CoordinatorMachine.Directive {
        switch self {
        case .propose(let proposal): .propose(proposal)
        }
    }
}

extension CoordinatorMachine.SuspensionDirective: CoordinatorDirective {
    var directive: CoordinatorMachine.Directive {
        switch self {
        case .propose(let proposal): .propose(proposal)
        case .issue(let issued): .issue(issued)
        case .wake(let instant): .wake(at: instant)
        }
    }
}

extension CoordinatorMachine.DepartureDirective: CoordinatorDirective {
    var directive: CoordinatorMachine.Directive {
        switch self {
        case .propose(let proposal): .propose(proposal)
        }
    }
}
