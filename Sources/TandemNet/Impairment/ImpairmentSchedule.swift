#if canImport(Glibc)
import Glibc
#endif
import TandemClock

/// The pure core of every impaired path: decides, for each datagram and each chunk of a byte
/// stream, whether and when it is delivered. It reads no clock and does no I/O; its shell (the
/// impairment proxy, the in-memory relay, the simulated network) passes arrival times in and
/// carries the decisions out.
///
/// Every item draws its own delay: uniformly in `baseDelay ± jitter`, plus exponential queueing
/// when the impairment has it. Datagrams are independent, as on a path where each takes its own
/// route: with jitter wider than their spacing they may arrive out of order, as netem's do. A
/// stream's chunks are delivered in order: a chunk is never due before the chunk before it on the
/// same stream, so a chunk that drew a short delay behind one that drew a long one waits for it
/// (a byte stream has one queue). Loss, reordering and duplication never touch streams.
///
/// Draws: every datagram draws loss, reordering and its delay, so that changing one probability
/// does not shift every later draw of the others; queueing and duplication draw only when the
/// impairment has them, so that a schedule without them repeats the same decisions it always did.
public struct ImpairmentSchedule: Sendable {
    /// What becomes of one datagram.
    public enum DatagramDecision: Sendable, Hashable {
        /// Drop it.
        case lose
        /// Deliver it at `time`; `heldBack` when it was chosen for reordering.
        case deliver(at: Int64, heldBack: Bool)
        /// Deliver it at `time` and a copy of it at `copyAt` (drawn with a delay of its own).
        case deliverTwice(at: Int64, heldBack: Bool, copyAt: Int64)

        /// When it is delivered, copies included, in the order they are due.
        public var deliveries: [Int64] {
            switch self {
            case .lose: []
            case let .deliver(time, _): [time]
            case let .deliverTwice(time, _, copy): [min(time, copy), max(time, copy)]
            }
        }

        /// Whether it was chosen for reordering.
        public var heldBack: Bool {
            switch self {
            case .lose: false
            case let .deliver(_, heldBack), let .deliverTwice(_, heldBack, _): heldBack
            }
        }
    }

    /// What is added.
    public let impairment: Impairment
    private var random: SeededRandom
    /// The due time of the last chunk scheduled on each stream and direction.
    private var streamTails: [StreamKey: Int64] = [:]

    private struct StreamKey: Hashable {
        var stream: UInt64
        var direction: PathDirection
    }

    /// A schedule adding `impairment`, drawing from a generator seeded with `seed`.
    public init(impairment: Impairment, seed: UInt64) {
        self.impairment = impairment
        random = SeededRandom(seed: seed)
    }

    /// Decides the fate of a datagram that arrived at `time` going `direction`.
    public mutating func onDatagram(_ direction: PathDirection, at time: Int64) -> DatagramDecision {
        let lost = random.unit() < impairment.loss
        let heldBack = random.unit() < impairment.reorder
        let delay = drawDelay(direction)
        let duplicated = impairment.duplication > 0 && random.unit() < impairment.duplication
        if lost { return .lose }
        let due = time.saturatingAdding(delay + (heldBack ? impairment.reorderHold : 0))
        guard duplicated else { return .deliver(at: due, heldBack: heldBack) }
        return .deliverTwice(at: due, heldBack: heldBack, copyAt: time.saturatingAdding(drawDelay(direction)))
    }

    /// The time at which a chunk of stream `stream` that arrived at `time` going `direction` is
    /// due: its own delay, but never before the previous chunk of the same stream and direction.
    public mutating func onChunk(stream: UInt64, _ direction: PathDirection, at time: Int64) -> Int64 {
        let key = StreamKey(stream: stream, direction: direction)
        let drawn = time.saturatingAdding(drawDelay(direction))
        let due = max(drawn, streamTails[key] ?? drawn)
        streamTails[key] = due
        return due
    }

    /// Forgets a stream that has closed.
    public mutating func onStreamClosed(_ stream: UInt64) {
        for direction in PathDirection.allCases {
            streamTails[StreamKey(stream: stream, direction: direction)] = nil
        }
    }

    /// How many streams the schedule is keeping order for.
    public var openStreamCount: Int { Set(streamTails.keys.map(\.stream)).count }

    private mutating func drawDelay(_ direction: PathDirection) -> Int64 {
        let base = impairment.baseDelay(direction)
        let jitter = impairment.jitter
        var delay = base
        if jitter > 0 {
            // Uniform on [base − jitter, base + jitter]; `problem` guarantees it stays non-negative.
            delay = base - jitter + Int64(random.unit() * Double(2 * jitter + 1))
        }
        if impairment.queueing > 0 {
            // 1 − u lies in (0, 1], so the logarithm is finite.
            delay += Int64(saturating: -Double(impairment.queueing) * log(1 - random.unit()))
        }
        return delay
    }
}
