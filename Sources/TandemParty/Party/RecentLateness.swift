import Synchronization
import TandemClock
import TandemMedia

/// A video sink that keeps how late the latest pictures were presented against their instants
/// (stills aside), with the monotonic instant of each, so that a participant's health report
/// can give the median over about the last second. It keeps the newest `capacity`.
final class RecentLateness: VideoSink {
    private let capacity: Int
    private let state = Mutex((entries: [(at: HostInstant, lateness: TimeSpan)](), next: 0))

    /// Keeps up to `capacity` pictures (a second and more at any frame rate up to 120).
    init(capacity: Int = 128) {
        self.capacity = max(1, capacity)
    }

    func present(_ frame: VideoFrame, _ presentation: Presentation) {
        guard !presentation.isStill else { return }
        let entry = (at: HostInstant.now(), lateness: presentation.lateBy)
        let capacity = capacity
        state.withLock { state in
            if state.entries.count < capacity {
                state.entries.append(entry)
            } else {
                state.entries[state.next] = entry
                state.next = (state.next + 1) % capacity
            }
        }
    }

    /// The median lateness of the pictures presented at or after `since`; nil when there were
    /// none.
    func median(since: HostInstant) -> TimeSpan? {
        let recent = state.withLock { $0.entries.filter { $0.at >= since }.map(\.lateness) }.sorted()
        guard !recent.isEmpty else { return nil }
        return recent[recent.count / 2]
    }
}
