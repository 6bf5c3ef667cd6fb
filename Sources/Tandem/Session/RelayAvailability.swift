/// Whether the session's relay can order the group's changes now (`GroupSession.relayAvailability`).
///
/// A relay of a cluster (`tandem serve --cluster`) says when it cannot: it lost NATS, or the
/// session's stream took nothing of its for a while. The session stays joined
/// meanwhile: what this participant sends (messages, proposals, activity changes) is held and
/// takes effect late, in the group's order, once the relay is available again.
public enum RelayAvailability: Sendable, Hashable, CustomStringConvertible {
    /// The relay orders the session's changes.
    case available
    /// The relay cannot order anything now, with its reason.
    case unavailable(reason: String)

    /// `available` or `unavailable`.
    public var description: String {
        switch self {
        case .available: "available"
        case .unavailable: "unavailable"
        }
    }
}
