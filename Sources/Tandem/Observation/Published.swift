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

    /// The current value; setting it tells every subscriber (or, for a session's `activity`,
    /// proposes the new value to the group).
    public var wrappedValue: Value {
        get { storage.value }
        nonmutating set {
            if !storage.intercept(newValue) { storage.value = newValue }
        }
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
        /// Set by `finish()`: later subscribers get the last value and the end at once.
        var finished = false
    }

    private let state: Mutex<State>
    /// What a program's assignment does instead of setting the value, when it returns true
    /// (a session's activity is proposed to the group rather than set here alone).
    private let interceptor = Mutex<Interceptor?>(nil)

    init(_ value: Value) {
        state = Mutex(State(value: value))
    }

    /// Routes assignments through `handler` from now on.
    func interceptAssignments(_ handler: @escaping @Sendable (Value) -> Bool) {
        interceptor.withLock { $0 = Interceptor(take: handler) }
    }

    /// Whether an assignment of `value` was taken by the interceptor.
    func intercept(_ value: Value) -> Bool {
        guard let handler = interceptor.withLock({ $0 }) else { return false }
        return handler.take(value)
    }

    /// What takes assignments.
    /// Held in a struct: a bare closure held by the generic `Mutex` is stored in its generic
    /// form, and every access under the lock wraps it in a conversion each way and writes it
    /// back, one closure deeper each time, until a call overflows the stack.
    private struct Interceptor: Sendable {
        let take: @Sendable (Value) -> Bool
    }

    var value: Value {
        get { state.withLock { $0.value } }
        set {
            // Yielded under the lock, unlike most resumptions here: each subscriber keeps only the
            // newest value, so a yield that overtook another (two setters, or a setter and a new
            // subscriber's first value) would leave it on a stale one for good. A yield never
            // calls back into this storage (`onTermination` runs on finishing or cancelling).
            state.withLock { state in
                state.value = newValue
                for subscriber in state.subscribers.values { subscriber.yield(newValue) }
            }
        }
    }

    func subscribe() -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: .bufferingNewest(1))
        // The current value goes first, under the lock, so that no change overtakes it.
        let id = state.withLock { state -> Int? in
            continuation.yield(state.value)
            guard !state.finished else { return nil }
            let id = state.nextSubscriber
            state.nextSubscriber += 1
            state.subscribers[id] = continuation
            return id
        }
        guard let id else {
            // The owner is finished (a session invalidated): the sequence ends after its last value.
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Ends every subscriber's sequence (the owner is finished).
    func finish() {
        let subscribers = state.withLock { state in
            state.finished = true
            defer { state.subscribers.removeAll() }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }
}
