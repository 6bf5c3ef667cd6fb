/// A token bucket on injected time: refills at `rate` tokens a second up to `capacity`, and a
/// cost is paid only when the bucket holds it.
///
/// The classic rate limiter (Turner, "New directions in communications", 1986; as in RFC 2697's
/// single-rate meter): bursts up to the capacity pass, a sustained rate above `rate` does not.
public struct TokenBucket: Sendable, Hashable {
    /// Tokens added per second.
    public let rate: Double
    /// The most tokens the bucket holds.
    public let capacity: Double
    private var tokens: Double
    private var updated: Int64

    /// A full bucket at time `now` (nanoseconds).
    public init(rate: Double, capacity: Double, now: Int64) {
        self.rate = rate
        self.capacity = capacity
        tokens = capacity
        updated = now
    }

    /// The tokens the bucket would hold at `now`.
    public func available(at now: Int64) -> Double {
        min(capacity, tokens + Double(max(now - updated, 0)) * rate / 1e9)
    }

    /// Whether the bucket would be full at `now`: one that is can be forgotten and made again.
    public func isFull(at now: Int64) -> Bool {
        tokens + Double(max(now - updated, 0)) * rate / 1e9 >= capacity
    }

    /// Pays `cost` at time `now`; false (and nothing paid) when the bucket holds too little.
    public mutating func take(_ cost: Double, at now: Int64) -> Bool {
        if now > updated {
            tokens = min(capacity, tokens + Double(now - updated) * rate / 1e9)
            updated = now
        }
        guard tokens >= cost else { return false }
        tokens -= cost
        return true
    }
}
