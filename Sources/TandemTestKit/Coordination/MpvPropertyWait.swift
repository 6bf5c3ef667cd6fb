import Synchronization
import TandemMpv

/// Observation ids for the tests' own watches, far above the few a connection numbers itself.
private let watchIDs = Atomic<Int>(1_000_000)

extension MpvConnection {
    /// Waits until mpv's `property` has a value satisfying `predicate` (its value now included),
    /// for at most `seconds`; true when it did.
    ///
    /// mpv announces the property's value and each change of it on this connection
    /// (`observe_property`, dropped again after the wait), so the wait follows mpv's own
    /// announcements with no polling; the bound is only a bound.
    public func awaitProperty(_ property: String, within seconds: Double = 10,
                       _ predicate: @escaping @Sendable (MpvValue) -> Bool) async -> Bool {
        let id = watchIDs.wrappingAdd(1, ordering: .relaxed).newValue
        // Subscribed before the watch starts, so that the value mpv announces at once is seen.
        let events = self.events
        guard (try? await command(["observe_property", .number(Double(id)), .string(property)])) != nil else { return false }
        let held = await awaitValue(events, within: seconds) { event in
            event.propertyName == property && event.message["id"]?.double == Double(id) && predicate(event.propertyValue)
        }
        _ = try? await command(["unobserve_property", .number(Double(id))])
        return held
    }

    /// Waits until mpv's position (`time-pos`, in ns) satisfies `predicate`, as
    /// `awaitProperty(_:within:_:)` does; true when it did.
    public func awaitPosition(within seconds: Double = 10, _ predicate: @escaping @Sendable (Int64) -> Bool) async -> Bool {
        await awaitProperty("time-pos", within: seconds) { value in
            value.double.map { predicate(Int64(($0 * 1e9).rounded())) } ?? false
        }
    }
}

/// Waits until mpv's `property` satisfies `predicate` on every one of `connections`, for at most
/// `seconds` each: each is awaited in turn as `awaitProperty(_:within:_:)` does, then all are read
/// once more, so that the values hold together. True when they did.
public func awaitProperty(_ property: String, on connections: [MpvConnection], within seconds: Double = 10,
                   _ predicate: @escaping @Sendable (MpvValue) -> Bool) async -> Bool {
    for connection in connections {
        guard await connection.awaitProperty(property, within: seconds, predicate) else { return false }
    }
    for connection in connections {
        guard let value = try? await connection.get(property), predicate(value) else { return false }
    }
    return true
}
