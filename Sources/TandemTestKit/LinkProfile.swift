/// The impairments of one direction of a simulated path.
public struct LinkProfile: Sendable, Hashable, Codable {
    /// The one-way delay.
    public var delay: DelayDistribution
    /// The probability that a datagram vanishes.
    public var lossProbability: Double
    /// The probability that a datagram arrives twice (the copy with its own delay).
    public var duplicationProbability: Double
    /// The probability that a datagram is held back by `reorderDelay` on top of its delay, so that
    /// later ones overtake it.
    public var reorderProbability: Double
    /// The extra delay of a held-back datagram.
    public var reorderDelay: Int64

    /// Creates a profile; by default a perfect link with the given delay.
    public init(delay: DelayDistribution, lossProbability: Double = 0, duplicationProbability: Double = 0,
                reorderProbability: Double = 0, reorderDelay: Int64 = 0) {
        self.delay = delay
        self.lossProbability = lossProbability
        self.duplicationProbability = duplicationProbability
        self.reorderProbability = reorderProbability
        self.reorderDelay = reorderDelay
    }
}
