#if canImport(Glibc)
import Glibc
#endif
import CTandemSystem
import TandemClock
import Synchronization
import TandemMediaTypes

/// Keeps this process's processors awake over the last `WakeGuardCore.Configuration.lead`
/// before each presentation deadline, once a wait here has been seen to wake late (the
/// shell of `WakeGuardCore`, which says why).
///
/// One warmer thread per processor the process may use (at most `maximumWarmers`), each pinned
/// to its processor at Linux's idle policy (`SCHED_IDLE`), so that any other thread comes first:
/// it spins through each window, yielding at every turn, and rests for a second on a processor
/// it finds busy (`WarmerBackoff`). The warmers start when the guard first engages and then live
/// as long as the process, waiting on a condition while there is nothing to cover. Where
/// pinning or the idle policy is refused, a warmer still runs, unpinned or at an ordinary
/// priority.
///
/// A warmer tests `state` with `lock` held and waits on `changed`; `woke(deadline:)` and
/// `cover(deadline:)` change `state` first and then broadcast with `lock` held, so that no change
/// falls between a test and a wait.
final class WakeGuard: Sendable {
    /// The process's guard, shared by every player's presentation thread.
    static let shared = WakeGuard()

    /// Warmers on a machine with more processors stop at this many (the first processors).
    static let maximumWarmers = 16

    private struct State {
        var core: WakeGuardCore
        var warmers: [WorkerThread] = []
    }

    private let state: Mutex<State>
    /// Held by a warmer while it tests `state`, and by whoever wakes the warmers.
    private let lock = ConditionLock()
    private let changed: ConditionLock.Condition

    init(configuration: WakeGuardCore.Configuration = WakeGuardCore.Configuration()) {
        state = Mutex(State(core: WakeGuardCore(configuration: configuration)))
        changed = lock.condition(0)
    }

    /// The processors the warmers run on, one each: those this thread may use, lowest first.
    static func processors() -> [Int32] {
        var cpus = [Int32](repeating: 0, count: maximumWarmers)
        let count = Int(tandem_allowed_cpus(&cpus, Int32(maximumWarmers)))
        return count > 0 ? Array(cpus.prefix(count)) : [-1]
    }

    /// How many warmers run (0 until the guard first engages).
    var warmerCount: Int { state.withLock { $0.warmers.count } }

    /// Whether the guard is engaged now.
    var isEngaged: Bool { state.withLock { $0.core.isEngaged(at: HostInstant.now().nanoseconds) } }

    /// A timed wait for monotonic instant `deadline` returned for its deadline: a late one
    /// engages the guard (and starts the warmers the first time).
    func woke(deadline: Int64) {
        let now = HostInstant.now().nanoseconds
        let engaged = state.withLock { state -> Bool in
            guard state.core.woke(deadline: deadline, at: now) else { return false }
            if state.warmers.isEmpty {
                state.warmers = Self.processors().enumerated().map { index, cpu in
                    WorkerThread(name: "tandem-warm-\(index)", timerSlack: 1) { [self] in warm(on: cpu) }
                }
            }
            return true
        }
        if engaged { lock.withLock { changed.broadcast() } }
    }

    /// A presentation deadline at monotonic instant `deadline`: covered while the guard is engaged.
    func cover(deadline: Int64) {
        let now = HostInstant.now().nanoseconds
        if state.withLock({ $0.core.cover(deadline: deadline, at: now) }) {
            lock.withLock { changed.broadcast() }
        }
    }

    /// A warmer's life, on processor `cpu` (-1: wherever the kernel puts it).
    private func warm(on cpu: Int32) {
        if cpu >= 0 { _ = tandem_pin_thread_to_cpu(cpu) }
        _ = tandem_set_idle_policy()
        var backoff = WarmerBackoff()
        lock.lock()
        while true {
            let now = HostInstant.now().nanoseconds
            switch state.withLock({ $0.core.next(at: now) }) {
            case .idle:
                changed.wait()
            case .wait(let start):
                // Its own wake is no evidence: at the idle policy it wakes late whenever its
                // processor is busy, which is when the guard is not needed.
                changed.wait(until: start)
            case .spin(let end) where !backoff.spins(at: now):
                changed.wait(until: end)
            case .spin(let end):
                lock.unlock()
                let before = Self.threadTime()
                // Each turn yields, so that a thread of the processor's that becomes runnable
                // without waking (a decoder's time slice) is not kept waiting for the warmer's.
                while HostInstant.now().nanoseconds < end { sched_yield() }
                let finished = HostInstant.now().nanoseconds
                backoff.spun(span: finished - now, ran: Self.threadTime() - before, at: finished)
                lock.lock()
            }
        }
    }

    /// The processor time the calling thread has used, in nanoseconds.
    private static func threadTime() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
}
