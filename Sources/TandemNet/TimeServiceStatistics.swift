/// What a time service has done so far.
public struct TimeServiceStatistics: Sendable, Hashable, Codable {
    /// Requests answered.
    public var answered: Int
    /// Datagrams ignored: malformed, oversized, of another kind, or not sendable.
    public var ignored: Int

    /// Creates statistics from their parts.
    public init(answered: Int, ignored: Int) {
        self.answered = answered
        self.ignored = ignored
    }
}
