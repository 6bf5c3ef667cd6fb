import TandemClock

/// The lines mpv's screen shows (`WatchParty.showOnScreen(_:)`): mpv's OSD holds one text at a
/// time, so that a line shown alone would hide the one before it the moment it came ("Ben
/// joined", then at once "Ben paused at 12:03"). Each new line is shown under those shown in the
/// last `lifetime`, at most `limit` of them, the newest last.
///
/// Pure: lines come in with their instants, the text to show goes out.
public struct OnScreenLines: Sendable {
    /// How long a line stays among those shown.
    public let lifetime: TimeSpan
    /// The most lines shown at once.
    public let limit: Int
    private var recent: [(line: String, at: LocalInstant)] = []

    /// Nothing shown yet; lines last `lifetime`, at most `limit` at once.
    public init(lifetime: TimeSpan = .seconds(5), limit: Int = 3) {
        self.lifetime = lifetime
        self.limit = max(1, limit)
    }

    /// Adds `line`, come at `now`; returns the lines to show now, oldest first.
    public mutating func add(_ line: String, at now: LocalInstant) -> [String] {
        recent.removeAll { now - $0.at >= lifetime }
        recent.append((line, now))
        if recent.count > limit { recent.removeFirst(recent.count - limit) }
        return recent.map(\.line)
    }
}
