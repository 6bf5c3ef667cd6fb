#if canImport(Glibc)
import Glibc
#endif

/// How long a simulated datagram takes on one leg, in nanoseconds.
public enum DelayDistribution: Sendable, Hashable, Codable {
    /// Always the same delay.
    case constant(Int64)
    /// Uniformly between the two bounds: symmetric jitter around their midpoint.
    case uniform(Int64, Int64)
    /// A propagation floor plus exponentially distributed queueing with the given mean: the usual
    /// model of a path whose queues sometimes fill.
    case floorPlusExponential(floor: Int64, mean: Int64)

    /// Draws one delay.
    public func sample(using random: inout SeededRandom) -> Int64 {
        switch self {
        case let .constant(delay):
            return delay
        case let .uniform(low, high):
            return low + Int64(random.unit() * Double(high - low))
        case let .floorPlusExponential(floor, mean):
            // 1 − u lies in (0, 1], so the logarithm is finite.
            return floor + Int64(-Double(mean) * log(1 - random.unit()))
        }
    }

    /// The smallest delay it can produce.
    public var minimum: Int64 {
        switch self {
        case let .constant(delay): delay
        case let .uniform(low, _): low
        case let .floorPlusExponential(floor, _): floor
        }
    }
}
