/// Which way an item travels through the proxy.
public enum NetsimDirection: String, Sendable, Hashable, Codable, CaseIterable {
    /// From a client to the target ("upstream").
    case up
    /// From the target back to a client ("downstream"); the asymmetry applies here.
    case down
}
