import Foundation
import Synchronization

/// A thread of its own for a blocking body (a flood over a blocking socket, a slow reader), and
/// a wait for its end that suspends until the body has returned, with no polling.
public final class JoinableThread: Sendable {
    private struct State {
        var finished = false
        var joiners: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())
    private let body: @Sendable () -> Void

    /// A thread that will run `body` once started.
    public init(_ body: @escaping @Sendable () -> Void) {
        self.body = body
    }

    /// Starts the thread.
    public func start() {
        Thread { [self] in
            body()
            let joiners = state.withLock { state in
                state.finished = true
                defer { state.joiners = [] }
                return state.joiners
            }
            for joiner in joiners { joiner.resume() }
        }.start()
    }

    /// Whether the body has returned.
    public var isFinished: Bool { state.withLock { $0.finished } }

    /// Returns once the body has returned (at once if it has).
    public func join() async {
        await withCheckedContinuation { continuation in
            let finished = state.withLock { state in
                if !state.finished { state.joiners.append(continuation) }
                return state.finished
            }
            if finished { continuation.resume() }
        }
    }
}
