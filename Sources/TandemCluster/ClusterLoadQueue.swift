import Foundation

/// Which sessions a relay replays from their logs at once: at most `limit`, the others waiting
/// their turn in the order they were asked for (a relay restarted and asked for many sessions at
/// once replays a few at a time, and the relay's loop keeps serving those already loaded).
///
/// Pure: the shell (`ClusterRelay`) asks it under its lock and starts what it says.
struct ClusterLoadQueue: Sendable {
    /// The most sessions loading at once.
    let limit: Int
    /// The sessions loading now.
    private(set) var loading: Set<UUID> = []
    private var waiting: [UUID] = []
    private var waitingHead = 0
    /// The most that were loading at once so far.
    private(set) var peak = 0

    /// A queue that lets `limit` (at least one) load at once.
    init(limit: Int) { self.limit = max(limit, 1) }

    /// How many wait their turn.
    var waitingCount: Int { waiting.count - waitingHead }

    /// Whether `session` starts loading now; if not, it waits, and `finish` of another says when.
    mutating func request(_ session: UUID) -> Bool {
        guard !loading.contains(session), !waiting[waitingHead...].contains(session) else { return false }
        guard loading.count < limit else {
            waiting.append(session)
            return false
        }
        loading.insert(session)
        peak = max(peak, loading.count)
        return true
    }

    /// `session` is loaded, gave up, or is no longer wanted (waiting or loading): the sessions
    /// that start loading now, in the order they were asked for.
    mutating func finish(_ session: UUID) -> [UUID] {
        if loading.remove(session) == nil {
            if let index = waiting[waitingHead...].firstIndex(of: session) { waiting.remove(at: index) }
            return []
        }
        var started: [UUID] = []
        while loading.count < limit, waitingHead < waiting.count {
            let next = waiting[waitingHead]
            waitingHead += 1
            loading.insert(next)
            started.append(next)
        }
        if waitingHead > 64, waitingHead * 2 > waiting.count {
            waiting.removeFirst(waitingHead)
            waitingHead = 0
        }
        peak = max(peak, loading.count)
        return started
    }
}
