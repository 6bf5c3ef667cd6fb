import Synchronization

/// The elements of an `AsyncStream` as they arrive, read by a task of its own, and a wait for
/// them to satisfy a condition that follows each arrival, with no polling.
///
/// For the tests of shells whose streams (messages, ordered records, rejections, events) carry
/// what a test waits for: `awaitElements(within:_:)` returns as soon as the elements so far
/// satisfy the condition, and the recording goes on, so that a later check can still see an
/// element that should not have come.
public final class StreamRecording<Element: Sendable>: Sendable {
    private struct State {
        var elements: [Element] = []
        var finished = false
        var watchers: [Int: AsyncStream<Void>.Continuation] = [:]
        var nextWatcher = 0
    }

    private let state = Mutex(State())
    private let reader = Mutex<Task<Void, Never>?>(nil)

    /// Starts recording `stream`; the recording stops when the stream finishes, on `stop()`,
    /// or when the recording is released.
    public init(_ stream: AsyncStream<Element>) {
        let task = Task { [weak self] in
            for await element in stream {
                guard let self else { return }
                self.update { $0.elements.append(element) }
            }
            self?.update { $0.finished = true }
        }
        reader.withLock { $0 = task }
    }

    deinit { reader.withLock { $0?.cancel() } }

    /// Every element so far, in order.
    public var elements: [Element] { state.withLock { $0.elements } }

    /// Whether the stream has finished.
    public var finished: Bool { state.withLock { $0.finished } }

    /// Stops reading the stream.
    public func stop() { reader.withLock { $0?.cancel() } }

    /// Waits until the elements so far satisfy `predicate` (those already recorded included),
    /// for at most `seconds`; true when they did. `predicate` is checked after each arrival.
    public func awaitElements(within seconds: Double = 10, _ predicate: @escaping @Sendable ([Element]) -> Bool) async -> Bool {
        let (arrivals, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { state in
            defer { state.nextWatcher += 1 }
            state.watchers[state.nextWatcher] = continuation
            return state.nextWatcher
        }
        defer { _ = state.withLock { $0.watchers.removeValue(forKey: id) } }
        continuation.yield()
        return await awaitValue(arrivals, within: seconds) { [weak self] _ in
            guard let self else { return false }
            return predicate(self.elements)
        }
    }

    /// Waits until at least `count` elements have arrived, for at most `seconds`; true when they did.
    public func awaitCount(_ count: Int, within seconds: Double = 10) async -> Bool {
        await awaitElements(within: seconds) { $0.count >= count }
    }

    /// Changes the state and tells every watcher, after the lock.
    private func update(_ change: (inout State) -> Void) {
        let watchers = state.withLock { state in
            change(&state)
            return Array(state.watchers.values)
        }
        for watcher in watchers { watcher.yield() }
    }
}
