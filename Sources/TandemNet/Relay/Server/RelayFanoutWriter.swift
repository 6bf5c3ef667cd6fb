#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import Synchronization

/// A second thread that shares the writes of a large fan-out with the relay's loop
/// (`tandem serve --writer-threads 2`).
///
/// A broadcast to a large session is one small frame queued for each of its connections, then
/// one write to each: on loopback the receiver's TCP work runs in the sender's system call, so
/// 199 writes of 7–9 µs each make the 1.5–1.9 ms a broadcast costs, all on one core. With this
/// writer, a flush of more than `sharedThreshold` connections is handed out one connection at a
/// time to whichever of the two threads is free (the loop's thread and this one), and the loop
/// waits until every connection of the batch is written before it goes on. While a batch is out,
/// the loop touches no connection, and each connection is written by exactly one thread, so its
/// frames go out in order and what the loop then does with each write's outcome (caps, the drop
/// of a connection whose write failed, the budget, drain notices) is what it would have done
/// writing alone. A smaller flush never involves this thread: no lock, no atomic on that path.
///
/// A thread woken late finds the batch already taken by the loop and does nothing: the loop never
/// waits for this thread to start, only for writes it has begun.
final class RelayFanoutWriter: Sendable {
    /// What a first write to one connection gave: whether everything queued went (`written`), or
    /// the socket failed.
    enum Outcome: Sendable, Equatable {
        case written(finished: Bool)
        case failed
    }

    /// Flushes to more connections than this are shared. A wake-up of the second thread costs
    /// about what a few loopback writes do, so only a session's broadcast gains.
    static let sharedThreshold = 16

    /// The priority the thread takes as it starts (the loop's, under `--priority`); nil leaves
    /// the default. Set before `start()`.
    var priority: ThreadPriority? {
        get { chosenPriority.withLock { $0 } }
        set { chosenPriority.withLock { $0 = newValue } }
    }

    private let chosenPriority = Mutex<ThreadPriority?>(nil)

    private let wakeups = DispatchSemaphore(value: 0)
    private let current = Mutex<Batch?>(nil)
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    /// Whether the thread runs: set by `start()`, cleared by `stop()`.
    private let started = Atomic<Bool>(false)

    /// One flush's connections, claimed one at a time by either thread.
    ///
    /// Unchecked: each slot of `outcomes` is written by the one thread that claimed its
    /// connection (the `next` counter hands each index out once) and read by the loop only after
    /// `completed` (released by each writer, acquired by the loop) counts every connection, so
    /// no slot is ever read and written at once; a lock per slot would put one on every write.
    /// The connections are the loop's, lent to the second thread for the batch alone (see the
    /// type's comment).
    private final class Batch: @unchecked Sendable {
        let connections: [RelayServerConnection]
        /// Each slot written by the thread that claimed its connection, read by the loop once
        /// `completed` says every connection is done.
        let outcomes: UnsafeMutableBufferPointer<Outcome?>
        let next = Atomic<Int>(0)
        let completed = Atomic<Int>(0)
        let bySecond = Atomic<Int>(0)

        init(_ connections: [RelayServerConnection]) {
            self.connections = connections
            outcomes = .allocate(capacity: connections.count)
            outcomes.initialize(repeating: nil)
        }

        deinit { outcomes.deallocate() }

        /// Claims and writes connections until none is left.
        func run(second: Bool) {
            while true {
                let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
                guard index < connections.count else { return }
                let connection = connections[index]
                if connection.isOpen {
                    do {
                        outcomes[index] = .written(finished: try connection.output.flush(to: connection.socket))
                    } catch {
                        outcomes[index] = .failed
                    }
                }
                if second { bySecond.wrappingAdd(1, ordering: .relaxed) }
                // Releases this connection's writes to the loop, which acquires them below.
                completed.wrappingAdd(1, ordering: .releasing)
            }
        }
    }

    /// How many writer threads of this process are in their loop now (tests see that `stop()`
    /// ends them).
    static let running = Atomic<Int>(0)

    /// Starts the thread. Once.
    func start() {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let priority = priority
        let thread = Thread { [self] in
            if let priority { try? priority.applyToCurrentThread() }
            RelayFanoutWriter.running.add(1, ordering: .relaxed)
            serve()
            RelayFanoutWriter.running.subtract(1, ordering: .relaxed)
            finished.signal()
        }
        thread.name = "tandem-relay-writer"
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Stops the thread and waits for it. Not while a batch is out (the loop has stopped).
    func stop() {
        guard started.exchange(false, ordering: .acquiringAndReleasing) else { return }
        stopping.store(true, ordering: .releasing)
        wakeups.signal()
        finished.wait()
    }

    /// Writes what waits for each of `connections` (every one written once, by one thread),
    /// sharing them with the second thread; the outcome of each (nil for one already closed),
    /// in order, and how many the second thread wrote. On the loop's thread.
    func write(_ connections: [RelayServerConnection]) -> (outcomes: [Outcome?], bySecond: Int) {
        let batch = Batch(connections)
        current.withLock { $0 = batch }
        wakeups.signal()
        batch.run(second: false)
        // Every connection is claimed; wait for those the second thread is still writing (one
        // at a time, a few microseconds each unless it was preempted, hence the yield).
        var spins = 0
        while batch.completed.load(ordering: .acquiring) < connections.count {
            spins += 1
            if spins > 64 { sched_yield() }
        }
        current.withLock { if $0 === batch { $0 = nil } }
        return (Array(batch.outcomes), batch.bySecond.load(ordering: .relaxed))
    }

    private func serve() {
        while true {
            wakeups.wait()
            if stopping.load(ordering: .acquiring) { return }
            // The lock orders the loop's writes to the connections before this thread's reads.
            guard let batch = current.withLock({ $0 }) else { continue }
            batch.run(second: true)
        }
    }
}
