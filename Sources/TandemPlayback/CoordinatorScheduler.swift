import Dispatch
import TandemClock

/// Work scheduled on a `CoordinatorScheduler`, which can be called off before it runs.
public protocol CoordinatorCancellable: Sendable {
    /// Calls the work off; it does nothing once the work has started.
    func cancel()
}

/// A serial executor and its clock, for a `PlaybackCoordinator` that is to run somewhere other
/// than its session's event loop: everything the coordinator decides runs here, one piece of
/// work at a time, in the order given, and time is what `now` says.
///
/// A coordinator given none runs on its session's event loop (the participant's loop, on the
/// host's raw monotonic clock), or on its coordination medium's queue. Give one to drive the
/// coordinator yourself: a test's virtual scheduler, whose time moves only when the test says.
public protocol CoordinatorScheduler: Sendable {
    /// The current host instant, on this scheduler's clock.
    var now: HostInstant { get }
    /// Runs `work` soon, after the work given before it.
    func execute(_ work: @escaping @Sendable () -> Void)
    /// Runs `work` at `instant` (at once, after the work already given, if it has passed).
    func schedule(at instant: HostInstant, _ work: @escaping @Sendable () -> Void) -> any CoordinatorCancellable
}

/// A `CoordinatorScheduler` on a serial dispatch queue of its own and the raw monotonic clock.
@available(*, deprecated, message: "a coordinator runs on its session's event loop when given no scheduler (coordinateWithSession(_:)); pass a scheduler only to drive it yourself")
public final class DispatchCoordinatorScheduler: CoordinatorScheduler {
    private let queue: QueueScheduler

    /// A scheduler on a new serial queue labelled `label`.
    public init(label: String = "tandem.playback-coordinator") {
        queue = QueueScheduler(label: label)
    }

    /// The raw monotonic clock.
    public var now: HostInstant { queue.now }

    /// Runs `work` on the queue.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        queue.execute(work)
    }

    /// Runs `work` on the queue at `instant`.
    public func schedule(at instant: HostInstant, _ work: @escaping @Sendable () -> Void) -> any CoordinatorCancellable {
        queue.schedule(at: instant, work)
    }
}
