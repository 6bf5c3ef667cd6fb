import Foundation
import Tandem
import TandemClock

// How the coordinator runs: one `CoordinationRun` per channel, every step of the machine on the
// run's executor, and the directives carried out there.
extension PlaybackCoordinator {
    /// Coordinates over `channel` from now on, on the scheduler given to the initializer, else
    /// on the executor the channel names (a session's loop, a medium's queue), else on a serial
    /// queue of its own. Work of an earlier channel does nothing from now on.
    func coordinate(over channel: any CoordinationChannel) {
        let executor: any CoordinatorExecutor = givenScheduler.map(GivenScheduler.init(base:))
            ?? channel.executor ?? QueueScheduler(label: "tandem.playback-coordinator")
        // The run, with its machine, first, so that the first record delivered finds it.
        let (run, previous) = view.withLock { view in
            let machine = CoordinatorMachine(localParticipant: channel.localParticipant, pauseSnapsToMediaTimeOfOriginator: view.pauseSnaps,
                                             waitsForPreroll: waitsForPreroll, configuration: view.configuration)
            view.generation += 1
            currentGeneration.store(view.generation, ordering: .releasing)
            let run = CoordinationRun(generation: view.generation, channel: channel, executor: executor, machine: machine)
            defer {
                view.run = run
                view.machine = machine
            }
            return (run, view.run)
        }
        if let previous { previous.run { previous.stop() } }
        let generation = run.generation
        // Ordered records and departures come straight from the channel's delivering thread
        // (the session's loop) into `receive` and `depart`, which step the machine there and
        // then when the run is on that loop: no hop and no task between the link and the machine.
        // Both deliveries end once this coordinator coordinates anew (or is gone).
        channel.deliverOrdered(while: { [weak self] in self?.isCurrent(generation) ?? false }) { [weak self] input in
            self?.receive(input, generation: generation)
        }
        channel.deliverDepartures(while: { [weak self] in self?.isCurrent(generation) ?? false }) { [weak self] participant in
            self?.depart(participant, generation: generation)
        }
        // A clock that tells of its changes is read when it changes; any other is watched for
        // its first estimate.
        if let clock = channel.clock, clock.observeChanges({ [weak self] in self?.clockChanged(generation) }) {
            clockChanged(generation)
        } else {
            watchForClock(generation)
        }
    }

    /// The channel the coordinator coordinates over now, if any.
    var currentChannel: (any CoordinationChannel)? { view.withLock { $0.run?.channel } }

    /// Stops coordinating: the run is stopped (work of its channel does nothing from now on),
    /// and the player keeps what it was last issued.
    func stopCoordinating() {
        let previous = view.withLock { view in
            view.generation += 1
            currentGeneration.store(view.generation, ordering: .releasing)
            defer {
                view.run = nil
                view.machine = nil
            }
            return view.run
        }
        if let previous { previous.run { previous.stop() } }
    }

    /// Whether `generation` is the channel the coordinator coordinates over now.
    /// Lock-free: the channel asks on its session's loop, for every record, and the loop must
    /// never wait for the coordinator's lock.
    func isCurrent(_ generation: Int) -> Bool { currentGeneration.load(ordering: .acquiring) == generation }

    /// Feeds the machine the next ordered record, on the run's executor: the channel calls it on
    /// its delivering thread, in order; on the session's loop it is fed there and then, and
    /// elsewhere `execute` keeps that order (tests call it directly).
    func receive(_ input: OrderedInput, generation: Int? = nil) {
        step(generation) { machine, now in machine.onOrdered(input, now: now).map(Self.effect) }
    }

    /// Feeds the machine a departure, on the run's executor.
    func depart(_ participant: UUID, generation: Int? = nil) {
        step(generation) { machine, now in machine.onDeparture(participant, now: now).map(Self.effect) }
    }

    /// Until the session clock's first estimate, looks for it every `clockWatchInterval` (there
    /// is no clock source until the session has joined, or it announces nothing); the
    /// machine is then given the mapping as an input, and a timeline that waited for it is issued
    /// at once. A source that appears and announces its changes ends the watch.
    private func watchForClock(_ generation: Int) {
        step(generation) { machine, now in
            machine.mapping == nil ? [.watchClock(at: now + Self.clockWatchInterval)] : []
        }
    }

    /// The session clock's estimate changed: the machine takes the new mapping (a timeline that
    /// waited for the first one is issued at once).
    private func clockChanged(_ generation: Int) {
        step(generation) { _, _ in [] }
    }

    /// How often the shell looks for the session clock's first estimate, when the clock does
    /// not tell of its changes.
    static let clockWatchInterval = TimeSpan.milliseconds(5)

    /// The shell's view of a directive: the machine's (`CoordinatorMachine.Directive`, where
    /// every handler's enum meets), or the shell's own.
    enum Effect {
        case directive(CoordinatorMachine.Directive)
        /// The shell's own: look for the session clock's first estimate again at this instant.
        case watchClock(at: HostInstant)
    }

    static func effect(_ directive: some CoordinatorDirective) -> Effect { .directive(directive.directive) }

    /// A request of this participant's: checked against the machine as every receiver will
    /// check it (and against the session's policy), sealed and sent for ordering, in one call
    /// on the run's loop; the machine takes it when it comes back in the group's order. A call
    /// from another thread hops onto the loop and waits for it there, so that a refusal is
    /// thrown to the caller; a call on the loop (a delegate's) runs at once. A caller on another
    /// participant's loop waits for this one, so two loops must not ask each other's
    /// coordinators at once. A run on an executor
    /// that cannot tell where its caller runs (a coordination medium's queue, a scheduler a
    /// program gave) is checked on the caller's thread against the machine as the run last
    /// published it, then sent.
    func request(_ request: CoordinatorMachine.LocalRequest) throws {
        guard let run = view.withLock({ $0.run }) else {
            throw CoordinatorError("the coordinator is not coordinating with a session yet")
        }
        guard let loop = run.executor.loop else {
            guard let machine = view.withLock({ $0.machine }) else {
                throw CoordinatorError("the coordinator is not coordinating with a session yet")
            }
            for proposal in try Self.check(request, against: machine, over: run.channel, at: run.executor.now) {
                try run.channel.propose(proposal)
            }
            return
        }
        try loop.runAndWait { [self] in try propose(request, on: run) }
    }

    /// Checks `request` against the run's machine and sends what it proposes: on the run's loop,
    /// where the machine is confined, so that the check, the sealing and the send are one step
    /// there.
    private func propose(_ request: CoordinatorMachine.LocalRequest, on run: CoordinationRun) throws {
        run.executor.preconditionCurrent()
        guard !run.isStopped, isCurrent(run.generation) else {
            throw CoordinatorError("the coordinator stopped coordinating with that session")
        }
        for proposal in try Self.check(request, against: run.machine, over: run.channel, at: run.executor.now) {
            try run.channel.propose(proposal)
        }
    }

    /// The proposals `request` makes, checked as every receiver will check them, against
    /// `machine` with the session clock's mapping of `now` (a copy: the machine changes only
    /// when the proposal comes back in the group's order), and against the session's policy, so
    /// that a refusal says why at once.
    private static func check(_ request: CoordinatorMachine.LocalRequest, against machine: CoordinatorMachine,
                              over channel: any CoordinationChannel, at now: HostInstant) throws -> [PlaybackProposal] {
        var refreshed = machine
        if let clock = channel.clock, let mapping = ClockMapping.sample(clock, localClock: channel.localClock, at: now),
           mapping != refreshed.mapping {
            _ = refreshed.onClockMapping(mapping, now: now)
        }
        return try refreshed.onLocalRequest(request, now: now).map { directive in
            switch directive {
            case .propose(let proposal):
                if let rejection = channel.policyRejection(of: proposal) { throw rejection }
                return proposal
            }
        }
    }

    /// Feeds the machine an input on the run's executor, with a fresh clock mapping first, and
    /// carries out what it returns. `generation`: only while coordinating over that channel;
    /// nil: over the channel current when called.
    func step(_ generation: Int? = nil, configuration given: CoordinatorMachine.Configuration? = nil,
              _ input: @escaping @Sendable (inout CoordinatorMachine, HostInstant) -> [Effect]) {
        guard let run = view.withLock({ $0.run }), generation == nil || generation == run.generation else { return }
        run.run { [weak self] in
            guard let self, !run.isStopped, self.isCurrent(run.generation) else { return }
            let now = run.executor.now
            let channel = run.channel
            var machine = run.machine
            machine.configuration = given ?? self.view.withLock { $0.configuration }
            machine.snapshots.noteChannel(expectsHistoryEnd: channel.marksEndOfHistory, present: channel.presentParticipants)
            var effects: [Effect] = []
            if let clock = channel.clock, let mapping = ClockMapping.sample(clock, localClock: channel.localClock, at: now),
               mapping != machine.mapping {
                effects += machine.onClockMapping(mapping, now: now).map(Self.effect)
            }
            effects += input(&machine, now)
            run.machine = machine
            // Published for the synchronous API, unless a newer run took over meanwhile.
            guard let readers = self.view.withLock({ view -> [@Sendable (Event) -> Void]? in
                guard view.generation == run.generation else { return nil }
                view.machine = machine
                return view.eventSinks
            }) else { return }
            if machine.core.timeline != self.timeline { self.timeline = machine.core.timeline }
            self.carryOut(effects, of: run, readers: readers)
        }
    }

    /// Carries out a step's effects, on the run's executor.
    private func carryOut(_ effects: [Effect], of run: CoordinationRun, readers: [@Sendable (Event) -> Void]) {
        run.executor.preconditionCurrent()
        let generation = run.generation
        for effect in effects {
            // A delegate may coordinate anew from within this loop (on the loop, the new run's
            // first steps then run before this one's remaining effects): nothing more of a
            // superseded run reaches the player or the group.
            guard isCurrent(generation) else { return }
            let directive: CoordinatorMachine.Directive
            switch effect {
            case .watchClock(let instant):
                run.clockWatch?.cancel()
                run.clockWatch = nil
                // A session clock that appeared meanwhile (the session joined) and tells of its
                // changes is told from now on, instead of watched.
                if let clock = run.channel.clock, clock.observeChanges({ [weak self] in self?.clockChanged(generation) }) {
                    clockChanged(generation)
                    continue
                }
                run.clockWatch = run.executor.schedule(at: instant) { [weak self] in self?.watchForClock(generation) }
                continue
            case .directive(let machine):
                directive = machine
            }
            switch directive {
            case .propose(let proposal):
                try? run.channel.propose(proposal)
            case .publishSnapshot(let snapshot):
                // Not sent: the relay keeps the records since the last one, and the machine
                // tries again later (soon when the refusal is for now).
                do { try run.channel.publish(snapshot) } catch {
                    let lasting = error is SnapshotTooLarge || error is EncodingError
                        || (error as? GroupSessionError)?.code == .tooLarge
                    step(generation) { machine, _ in
                        machine.onSnapshotNotPublished(lasting ? .tooLarge : .refused)
                        return []
                    }
                }
            case .emit(let event):
                for reader in readers { reader(event) }
            case .abandon:
                // The player may still complete it: the completion is then ignored.
                break
            case .issue(let issued):
                guard let delegate = delegate else {
                    step(generation) { machine, now in machine.onCommandCompleted(issued.id, now: now).map(Self.effect) }
                    continue
                }
                delegate.playbackCoordinator(self, didIssue: issued.command) { [weak self] in
                    self?.step(generation) { machine, now in machine.onCommandCompleted(issued.id, now: now).map(Self.effect) }
                }
            case .wake(let instant):
                run.wake?.cancel()
                run.wake = run.executor.schedule(at: instant) { [weak self] in
                    self?.step(generation) { machine, now in machine.onTick(now: now).map(Self.effect) }
                }
            }
        }
    }
}
