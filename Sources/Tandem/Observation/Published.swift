import Synchronization

/// A property whose changes can be observed without Combine: `session.$state.values` is an
/// async sequence that yields the current value, then each change, as on Apple platforms.
///
/// Each `values` call makes a subscriber of its own that keeps only the newest value
/// (`bufferingNewest(1)`): a slow reader sees the latest state, never a backlog.
@propertyWrapper
public struct Published<Value: Sendable>: Sendable {
    let storage: PublishedStorage<Value>

    /// A property starting at `wrappedValue`.
    public init(wrappedValue: Value) {
        storage = PublishedStorage(wrappedValue)
    }

    /// The current value; setting it tells every subscriber.
    public var wrappedValue: Value {
        get { storage.value }
        nonmutating set { storage.value = newValue }
    }

    /// The publisher of the property's values.
    public var projectedValue: Publisher { Publisher(storage: storage) }

    /// Hands out async sequences of a property's values.
    public struct Publisher: Sendable {
        let storage: PublishedStorage<Value>

        /// The current value, then each change, for as long as the caller iterates.
        public var values: AsyncStream<Value> { storage.subscribe() }
    }
}

/// The shared state behind a `Published` property: its value and its subscribers.
final class PublishedStorage<Value: Sendable>: Sendable {
    private struct State {
        var value: Value
        var subscribers: [Int: AsyncStream<Value>.Continuation] = [:]
        var nextSubscriber = 0
    }

    private let state: Mutex<State>

    init(_ value: Value) {
        state = Mutex(State(value: value))
    }

    var value: Value {
        get { state.withLock { $0.value } }
        set {
            // Decide under the lock, yield after releasing it.
            let subscribers = state.withLock { state in
                state.value = newValue
                return Array(state.subscribers.values)
            }
            for subscriber in subscribers { subscriber.yield(newValue) }
        }
    }

    func subscribe() -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: .bufferingNewest(1))
        let (id, current) = state.withLock { state in
            let id = state.nextSubscriber
            state.nextSubscriber += 1
            state.subscribers[id] = continuation
            return (id, state.value)
        }
        continuation.yield(current)
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Ends every subscriber's sequence (the owner is finished).
    func finish() {
        let subscribers = state.withLock { state in
            defer { state.subscribers.removeAll() }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }
}
