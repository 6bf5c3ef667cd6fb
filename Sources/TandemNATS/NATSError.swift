/// A NATS operation failed: what kind of failure, which server said so (when one did), and why.
///
/// Compare `kind` with the static members of `NATSError.Kind` (`error.kind == .timeout`); the
/// kinds are open to additions, so a `switch` over them is not exhaustive. The shape follows
/// Hummingbird's `PersistError`: a private code behind public static members.
public struct NATSError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure, comparable but not exhaustively switchable.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private enum Code: String, Hashable, Sendable {
            case authorizationFailed = "authorization failed"
            case noResponders = "no responders"
            case timeout
            case connectionLost = "connection lost"
            case payloadTooLarge = "payload too large"
            case invalidURL = "invalid URL"
            case invalidSubject = "invalid subject"
            case invalidHeaders = "invalid headers"
            case protocolViolation = "protocol violation"
            case serverError = "server error"
            case pendingBufferFull = "pending buffer full"
            case cannotConnect = "cannot connect"
            case closed
        }

        private let code: Code
        private init(_ code: Code) { self.code = code }

        /// The server refused the credentials (or their absence): `-ERR 'Authorization Violation'`.
        public static let authorizationFailed = Kind(.authorizationFailed)
        /// A request's subject had no subscriber: the server answered with status 503.
        public static let noResponders = Kind(.noResponders)
        /// A request, a flush or a connection attempt took longer than allowed.
        public static let timeout = Kind(.timeout)
        /// The connection broke while the operation was outstanding.
        public static let connectionLost = Kind(.connectionLost)
        /// A message (headers and payload) exceeds the server's `max_payload`.
        public static let payloadTooLarge = Kind(.payloadTooLarge)
        /// A `nats://` URL could not be understood.
        public static let invalidURL = Kind(.invalidURL)
        /// A subject (or queue group, or reply subject) is empty, has empty tokens or whitespace,
        /// or has wildcards where a publish cannot have them.
        public static let invalidSubject = Kind(.invalidSubject)
        /// A header name or value cannot be written (a colon in a name, a line break anywhere).
        public static let invalidHeaders = Kind(.invalidHeaders)
        /// The server sent bytes that are not the NATS protocol, or beyond its own limits.
        public static let protocolViolation = Kind(.protocolViolation)
        /// The server reported an error (`-ERR`) other than an authorization failure.
        public static let serverError = Kind(.serverError)
        /// Disconnected, and the bounded buffer of output kept for the next connection is full.
        public static let pendingBufferFull = Kind(.pendingBufferFull)
        /// No server of the list could be reached (or every one refused).
        public static let cannotConnect = Kind(.cannotConnect)
        /// The connection was closed by its owner.
        public static let closed = Kind(.closed)

        /// The kind's name, as in "no responders".
        public var description: String { code.rawValue }
    }

    /// What kind of failure this is.
    public let kind: Kind
    /// The server involved, as `HOST:PORT`, when one is.
    public let server: String?
    /// What happened, in words.
    public let reason: String

    /// An error of `kind` at `server`, saying `reason`.
    public init(_ kind: Kind, server: String? = nil, reason: String) {
        self.kind = kind
        self.server = server
        self.reason = reason
    }

    /// `KIND (at SERVER): REASON`.
    public var description: String {
        if let server { return "NATS \(kind) at \(server): \(reason)" }
        return "NATS \(kind): \(reason)"
    }
}
