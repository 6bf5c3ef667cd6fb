/// Which way an item travels on an impaired path: through the impairment proxy, the in-memory
/// relay or a simulated network alike.
public enum PathDirection: String, Sendable, Hashable, Codable, CaseIterable {
    /// From a client to the server or target ("upstream").
    case up
    /// From the server or target back to a client ("downstream"); an impairment's asymmetry
    /// applies here.
    case down
}
