import TandemClock

/// The changes a person made while the relay was away (`RelayAvailability.unavailable`), held
/// rather than sent into a link that may deliver them much later: on the relay's return, those
/// still fresh (made within `freshness`) are sent, and the others are refused, each with a line.
/// One that outlives `freshness` while the relay is still away is refused then, not at its
/// return. Nothing is dropped silently.
///
/// Pure: changes are named by the identifier `hold(at:)` hands out; the shell keeps what each
/// one does, and calls `expire(at:)` at `nextExpiry`.
public struct HeldChanges: Sendable {
    /// How long a change stays worth sending: one made longer ago would move everyone to where
    /// the person no longer is.
    public static let freshness = TimeSpan.seconds(2)
    /// What a refused change says.
    public static let refusal = "not sent: the relay was away for more than 2 s"

    private var held: [(id: Int, at: LocalInstant)] = []
    private var nextID = 0

    /// Nothing held.
    public init() {}

    /// Whether any change is held.
    public var isEmpty: Bool { held.isEmpty }

    /// When the oldest held change stops being fresh; nil when none is held.
    public var nextExpiry: LocalInstant? { held.first.map { $0.at + Self.freshness } }

    /// Holds a change made at `now`; returns its identifier.
    public mutating func hold(at now: LocalInstant) -> Int {
        nextID += 1
        held.append((nextID, now))
        return nextID
    }

    /// The relay answers again at `now`: the changes to send, in the order they were made, and
    /// those to refuse. Nothing is held after.
    public mutating func relayReturned(at now: LocalInstant) -> (send: [Int], refuse: [Int]) {
        defer { held = [] }
        let fresh = held.filter { now - $0.at <= Self.freshness }.map(\.id)
        return (fresh, held.map(\.id).filter { !fresh.contains($0) })
    }

    /// The changes no longer fresh at `now`, taken out to be refused.
    public mutating func expire(at now: LocalInstant) -> [Int] {
        let stale = held.filter { now - $0.at > Self.freshness }.map(\.id)
        held.removeAll { stale.contains($0.id) }
        return stale
    }
}
