/// Where a relay stands in its cluster's time, for logs, reports and tests.
public struct ClusterTimeStatus: Sendable, Hashable {
    /// What the relay is doing.
    public var role: ClusterTimeCore.Role = .discovering
    /// Whether its clock keeps the cluster's time.
    public var ready = false
    /// The relays it hears from, itself included.
    public var members = 1
    /// The mapping's jumps since the start (see `ClusterTimeCore.steps`).
    public var steps = 0
    /// How many times the authority changed, as this relay saw it.
    public var authorityChanges = 0
    /// Samples taken from the authorities followed.
    public var samples = 0
    /// The best round trip to the authority now followed, in ns, once there are samples.
    public var bestRoundTrip: Int64?
    /// Announcements that did not decode or were out of bounds, ignored.
    public var malformedAnnouncements = 0
    /// Whether NATS is connected.
    public var connected = true
}
