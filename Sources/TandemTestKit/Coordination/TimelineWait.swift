import TandemPlayback

/// Waits until `coordinator`'s published timeline satisfies `predicate`, the timeline as it is
/// now included, for at most `seconds`: the wait follows the timeline's changes as they are
/// published (`$timeline.values`), with no polling; the bound is only a bound. True when it did.
///
/// For the tests of shells on real players and sockets, whose time is real; a test of the
/// coordinator's behaviour runs in virtual time instead and needs no wait.
public func awaitTimeline(of coordinator: PlaybackCoordinator, within seconds: Double = 10,
                          _ predicate: @escaping @Sendable (SharedTimeline) -> Bool) async -> Bool {
    await withTaskGroup(of: Bool.self) { group in
        group.addTask {
            for await timeline in coordinator.$timeline.values where predicate(timeline) { return true }
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
