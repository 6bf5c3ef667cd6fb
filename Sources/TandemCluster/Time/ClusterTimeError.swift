import TandemNATS

/// Keeping the cluster's session time failed, or an announcement was refused: what kind, and why.
///
/// Compare `kind` with the static members of `ClusterTimeError.Kind`; the kinds are open to
/// additions. The shape follows `NATSError` (Hummingbird's `PersistError`).
public struct ClusterTimeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure, comparable but not exhaustively switchable.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private enum Code: String, Hashable, Sendable {
            case malformedAnnouncement = "malformed announcement"
            case notSynchronized = "not synchronized"
            case unavailable
            case invalidConfiguration = "invalid configuration"
        }

        private let code: Code
        private init(_ code: Code) { self.code = code }

        /// An announcement on NATS that does not decode or is out of bounds (ignored).
        public static let malformedAnnouncement = Kind(.malformedAnnouncement)
        /// The relay could not take the cluster's time in time: the authority's time service did
        /// not answer, or no relay became the authority.
        public static let notSynchronized = Kind(.notSynchronized)
        /// NATS refused the subscription or the first announcement.
        public static let unavailable = Kind(.unavailable)
        /// A setting is out of its range.
        public static let invalidConfiguration = Kind(.invalidConfiguration)

        /// The kind's name.
        public var description: String { code.rawValue }
    }

    /// What kind of failure this is.
    public let kind: Kind
    /// Why, in words fit for one line of a log.
    public let reason: String

    /// An error of `kind` for `reason`.
    public init(_ kind: Kind, reason: String) {
        self.kind = kind
        self.reason = reason
    }

    /// A malformed announcement, and what is wrong with it.
    public static func malformedAnnouncement(_ reason: String) -> ClusterTimeError { ClusterTimeError(.malformedAnnouncement, reason: reason) }

    /// "cluster time: KIND: REASON".
    public var description: String { "cluster time: \(kind): \(reason)" }
}
