import TandemClock

/// One coordination of a `PlaybackCoordinator`, from `coordinate(over:)` to the next or to
/// `stopCoordinating()`: the channel, the executor it runs on (the session's loop, a medium's
/// queue, or the scheduler a program gave), and what the shell keeps there: the machine and the
/// pending wake-ups.
///
/// `@unchecked Sendable` because every field it changes is confined to `executor`: `run(_:)`
/// hands work there, and `drain(_:)` asserts it where the executor can tell (a loop).
final class CoordinationRun: @unchecked Sendable {
    /// The coordinator's generation this run is (`PlaybackCoordinator.isCurrent(_:)`).
    let generation: Int
    /// What the coordinator coordinates over.
    let channel: any CoordinationChannel
    /// Where every step of this run runs.
    let executor: any CoordinatorExecutor

    // Confined to the executor.
    /// The machine, as the last step left it.
    var machine: CoordinatorMachine
    /// The machine's next wake-up.
    var wake: (any CoordinatorCancellable)?
    /// The shell's next look for the session clock's first estimate.
    var clockWatch: (any CoordinatorCancellable)?
    /// Whether the run was stopped: its steps do nothing from then on.
    private(set) var isStopped = false
    private var stepping = false
    private var pending: [@Sendable () -> Void] = []

    init(generation: Int, channel: any CoordinationChannel, executor: any CoordinatorExecutor, machine: CoordinatorMachine) {
        self.generation = generation
        self.channel = channel
        self.executor = executor
        self.machine = machine
    }

    /// Runs `work` on the executor: at once when the caller runs there (a record the session's
    /// loop delivers is fed to the machine in the same call, in the loop's order), after the
    /// step in progress when called from within one (a delegate that completes a command before
    /// returning), else handed to the executor, after what it holds.
    func run(_ work: @escaping @Sendable () -> Void) {
        guard executor.isCurrent == true else {
            executor.execute { [self] in drain(work) }
            return
        }
        drain(work)
    }

    /// Runs `work` and whatever it asked for meanwhile, one at a time, on the executor.
    private func drain(_ work: @escaping @Sendable () -> Void) {
        executor.preconditionCurrent()
        guard !stepping else {
            pending.append(work)
            return
        }
        stepping = true
        work()
        while !pending.isEmpty { pending.removeFirst()() }
        stepping = false
    }

    /// Stops the run: its wake-ups are called off and its steps do nothing from now on. On the
    /// executor.
    func stop() {
        executor.preconditionCurrent()
        isStopped = true
        wake?.cancel()
        clockWatch?.cancel()
        wake = nil
        clockWatch = nil
    }
}
