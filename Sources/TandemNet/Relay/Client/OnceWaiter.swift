import Synchronization

/// A caller's wait on a link's loop (a join, a request, a `leave()` or an `end(reason:)`),
/// resumed once: with the answer when it comes, or, should whatever holds the wait be dropped
/// first (a loop reset with the job still queued, a link released with its waiters), with
/// `ifDropped` as it goes. The caller then returns as it would once the link closed, instead of
/// waiting for good on a continuation that nobody can resume.
final class OnceWaiter<Value: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<Value, Never>?>
    private let ifDropped: Value

    /// A wait on `continuation`, resumed with `ifDropped` if nothing resumes it before it goes.
    init(_ continuation: CheckedContinuation<Value, Never>, ifDropped: Value) {
        self.continuation = Mutex(continuation)
        self.ifDropped = ifDropped
    }

    /// Resumes the wait with `value`; later calls do nothing.
    func resume(returning value: Value) {
        continuation.withLock { $0.take() }?.resume(returning: value)
    }

    deinit { resume(returning: ifDropped) }
}

extension OnceWaiter where Value == Void {
    /// A departure's wait: nothing to say but that it is over.
    convenience init(_ continuation: CheckedContinuation<Void, Never>) {
        self.init(continuation, ifDropped: ())
    }

    /// Resumes the wait; later calls do nothing.
    func resume() { resume(returning: ()) }
}
