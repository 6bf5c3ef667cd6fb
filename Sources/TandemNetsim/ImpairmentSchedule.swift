/// The proxy's pure core: decides, for each datagram and each chunk of a TCP byte stream, whether
/// and when it is delivered. It reads no clock and does no I/O; the shell passes arrival times in
/// and carries the decisions out.
///
/// Every item draws its own delay, uniformly in `baseDelay ± jitter`. Datagrams are independent,
/// as on a path where each takes its own route: with jitter wider than their spacing they may
/// arrive out of order, as netem's do, and the shell counts that. A TCP stream's chunks are
/// delivered in order: a chunk is never due before the chunk before it on the same stream, so a
/// chunk that drew a short delay behind one that drew a long one waits for it (a byte stream has
/// one queue). Loss and reordering never touch TCP.
public struct ImpairmentSchedule: Sendable {
    /// What becomes of one datagram.
    public enum DatagramDecision: Sendable, Hashable {
        /// Drop it.
        case lose
        /// Deliver it at `time`; `heldBack` when it was chosen for reordering.
        case deliver(at: Int64, heldBack: Bool)
    }

    /// What is added.
    public let impairment: Impairment
    private var random: ImpairmentRandom
    /// The due time of the last chunk scheduled on each stream and direction.
    private var streamTails: [StreamKey: Int64] = [:]

    private struct StreamKey: Hashable {
        var stream: UInt64
        var direction: NetsimDirection
    }

    /// A schedule adding `impairment`, drawing from a generator seeded with `seed`.
    public init(impairment: Impairment, seed: UInt64) {
        self.impairment = impairment
        random = ImpairmentRandom(seed: seed)
    }

    /// Decides the fate of a datagram that arrived at `time` going `direction`.
    public mutating func onDatagram(_ direction: NetsimDirection, at time: Int64) -> DatagramDecision {
        // Always draw the same number of values per datagram, so that changing one probability
        // does not shift every later draw of the others.
        let lost = random.unit() < impairment.loss
        let heldBack = random.unit() < impairment.reorder
        let delay = drawDelay(direction)
        if lost { return .lose }
        return .deliver(at: time + delay + (heldBack ? impairment.reorderHold : 0), heldBack: heldBack)
    }

    /// The time at which a chunk of stream `stream` that arrived at `time` going `direction` is
    /// due: its own delay, but never before the previous chunk of the same stream and direction.
    public mutating func onChunk(stream: UInt64, _ direction: NetsimDirection, at time: Int64) -> Int64 {
        let key = StreamKey(stream: stream, direction: direction)
        let drawn = time + drawDelay(direction)
        let due = max(drawn, streamTails[key] ?? drawn)
        streamTails[key] = due
        return due
    }

    /// Forgets a stream that has closed.
    public mutating func onStreamClosed(_ stream: UInt64) {
        for direction in NetsimDirection.allCases {
            streamTails[StreamKey(stream: stream, direction: direction)] = nil
        }
    }

    /// How many streams the schedule is keeping order for.
    public var openStreamCount: Int { Set(streamTails.keys.map(\.stream)).count }

    private mutating func drawDelay(_ direction: NetsimDirection) -> Int64 {
        let base = impairment.baseDelay(direction)
        let jitter = impairment.jitter
        guard jitter > 0 else { return base }
        // Uniform on [base − jitter, base + jitter]; `problem` guarantees it stays non-negative.
        return base - jitter + Int64(random.unit() * Double(2 * jitter + 1))
    }
}
