import Dispatch
import TandemClock

/// Work scheduled on a `CoordinatorScheduler`, which can be called off before it runs.
public protocol CoordinatorCancellable: Sendable {
    /// Calls the work off; it does nothing once the work has started.
    func cancel()
}

/// The one serial executor a `PlaybackCoordinator` runs on, and its clock: everything the
/// coordinator decides runs here, one piece of work at a time, in the order given, and time is
/// what `now` says. The production scheduler (`DispatchCoordinatorScheduler`) runs on a serial
/// dispatch queue on the host's raw monotonic clock; a test gives a virtual one whose time moves
/// only when the test says (an embedded event loop can conform).
public protocol CoordinatorScheduler: Sendable {
    /// The current host instant, on this scheduler's clock.
    var now: HostInstant { get }
    /// Runs `work` soon, after the work given before it.
    func execute(_ work: @escaping @Sendable () -> Void)
    /// Runs `work` at `instant` (at once, after the work already given, if it has passed).
    func schedule(at instant: HostInstant, _ work: @escaping @Sendable () -> Void) -> any CoordinatorCancellable
}

/// A `CoordinatorScheduler` on a serial dispatch queue and the raw monotonic clock.
public final class DispatchCoordinatorScheduler: CoordinatorScheduler {
    private let queue: DispatchQueue
    private let clock = SystemClock()

    /// A scheduler on a new serial queue labelled `label`.
    public init(label: String = "tandem.playback-coordinator") {
        queue = DispatchQueue(label: label)
    }

    /// The raw monotonic clock.
    public var now: HostInstant { HostInstant(nanoseconds: clock.now()) }

    /// Runs `work` on the queue.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        queue.async(execute: work)
    }

    /// Runs `work` on the queue at `instant`.
    public func schedule(at instant: HostInstant, _ work: @escaping @Sendable () -> Void) -> any CoordinatorCancellable {
        let item = DispatchWorkItem(block: work)
        let delay = max(0, (instant - now).nanoseconds)
        queue.asyncAfter(deadline: .now() + .nanoseconds(Int(clamping: delay)), execute: item)
        return DispatchCancellable(item: item)
    }

    private struct DispatchCancellable: CoordinatorCancellable, @unchecked Sendable {
        let item: DispatchWorkItem
        func cancel() { item.cancel() }
    }
}
