import TandemPlayback

/// Waits until a value of `values` (a published property's `$property.values`, which starts
/// with the value as it is now) satisfies `predicate`, for at most `seconds`: the wait follows
/// the changes as they are published, with no polling; the bound is only a bound. True when one
/// did.
///
/// For the tests of shells on real players, processes and sockets, whose time is real; a test
/// of the coordinator's behaviour runs in virtual time instead and needs no wait.
public func awaitValue<Element: Sendable>(_ values: AsyncStream<Element>, within seconds: Double = 10,
                                          _ predicate: @escaping @Sendable (Element) -> Bool) async -> Bool {
    await withTaskGroup(of: Bool.self) { group in
        group.addTask {
            for await value in values where predicate(value) { return true }
            return false
        }
        group.addTask {
            try? await Task.sleep(for: .seconds(seconds))
            return false
        }
        defer { group.cancelAll() }
        return await group.next() ?? false
    }
}

/// Waits until `coordinator`'s published timeline satisfies `predicate` (the timeline as it is
/// now included), for at most `seconds`, as `awaitValue(_:within:_:)` does. True when it did.
public func awaitTimeline(of coordinator: PlaybackCoordinator, within seconds: Double = 10,
                          _ predicate: @escaping @Sendable (SharedTimeline) -> Bool) async -> Bool {
    await awaitValue(coordinator.$timeline.values, within: seconds, predicate)
}

/// Polls `condition` every 10 ms until it holds, for at most `seconds`; true when it did.
///
/// For the tests of shells on real players, processes and sockets, whose time is real, where
/// nothing announces what they wait for (a player's statistics, a file's contents); what is
/// published is awaited with `awaitValue(_:within:_:)`, a stream's elements with
/// `StreamRecording`, mpv's properties with `MpvConnection.awaitProperty(_:within:_:)`, and a
/// test of behaviour runs in virtual time and needs none of them.
public func eventually(_ seconds: Double = 10, _ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return await condition()
}
