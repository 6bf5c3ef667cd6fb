#if canImport(Glibc)
import Glibc
#endif
import CTandemSystem

/// A POSIX thread of its own, for work that blocks or keeps deadlines (decoding, presenting),
/// kept off Swift's cooperative pool.
final class WorkerThread: @unchecked Sendable {
    private var thread = pthread_t()
    private var joined = false

    private final class Start {
        let name: String
        let timerSlack: UInt?
        let body: @Sendable () -> Void
        init(name: String, timerSlack: UInt?, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.timerSlack = timerSlack
            self.body = body
        }
    }

    /// Starts `body` on a new thread named `name` (at most 15 characters show in `top`).
    ///
    /// - Parameter timerSlack: the thread's timer slack in nanoseconds; 1 makes its timed waits
    ///   wake as close to their deadlines as the kernel can.
    init(name: String, timerSlack: UInt? = nil, _ body: @escaping @Sendable () -> Void) {
        let start = Unmanaged.passRetained(Start(name: name, timerSlack: timerSlack, body: body)).toOpaque()
        let created = pthread_create(&thread, nil, { context in
            let start = Unmanaged<Start>.fromOpaque(context!).takeRetainedValue()
            _ = tandem_set_thread_name(String(start.name.prefix(15)))
            if let slack = start.timerSlack { _ = tandem_set_timer_slack(slack) }
            start.body()
            return nil
        }, start)
        precondition(created == 0, "pthread_create failed: \(created)")
    }

    /// Waits for the thread to finish.
    func join() {
        guard !joined else { return }
        joined = true
        pthread_join(thread, nil)
    }
}
