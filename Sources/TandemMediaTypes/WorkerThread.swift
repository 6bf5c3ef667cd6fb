#if canImport(Glibc)
import Glibc
#endif
import CTandemSystem
import Synchronization

/// A POSIX thread of its own, for work that blocks or keeps deadlines (decoding, presenting),
/// kept off Swift's cooperative pool.
package final class WorkerThread: Sendable {
    private let thread: pthread_t
    private let joined = Atomic<Bool>(false)

    private final class Start {
        let name: String
        let timerSlack: UInt?
        let realtime: Bool
        let body: @Sendable () -> Void
        init(name: String, timerSlack: UInt?, realtime: Bool, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.timerSlack = timerSlack
            self.realtime = realtime
            self.body = body
        }
    }

    /// Starts `body` on a new thread named `name` (at most 15 characters show in `top`).
    ///
    /// - Parameters:
    ///   - timerSlack: the thread's timer slack in nanoseconds; 1 makes its timed waits wake as
    ///     close to their deadlines as the kernel can.
    ///   - realtime: ask for a real-time (SCHED_FIFO) priority, so that a busy machine does not
    ///     delay the thread's wake-ups; where that is not permitted, the thread runs normally.
    package init(name: String, timerSlack: UInt? = nil, realtime: Bool = false, _ body: @escaping @Sendable () -> Void) {
        let start = Unmanaged.passRetained(Start(name: name, timerSlack: timerSlack, realtime: realtime, body: body)).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { context in
            let start = Unmanaged<Start>.fromOpaque(context!).takeRetainedValue()
            _ = tandem_set_thread_name(String(start.name.prefix(15)))
            if let slack = start.timerSlack { _ = tandem_set_timer_slack(slack) }
            if start.realtime {
                // A low real-time priority: above every ordinary thread, below the kernel's own.
                var parameters = sched_param(sched_priority: 10)
                _ = pthread_setschedparam(pthread_self(), SCHED_FIFO, &parameters)
            }
            start.body()
            return nil
        }, start)
        precondition(created == 0, "pthread_create failed: \(created)")
        self.thread = thread
    }

    /// Waits for the thread to finish.
    package func join() {
        guard !joined.exchange(true, ordering: .acquiringAndReleasing) else { return }
        pthread_join(thread, nil)
    }
}
