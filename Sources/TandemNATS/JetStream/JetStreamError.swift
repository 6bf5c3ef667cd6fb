/// A JetStream operation failed: the API's error (its `err_code` and description), no stream for
/// the subject, a timeout, or the connection's own error.
///
/// Compare `kind` with the static members of `JetStreamError.Kind`; `errorCode` holds the
/// server's `err_code` (10071 for a wrong last sequence) when the API answered with an error.
public struct JetStreamError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure, comparable but not exhaustively switchable.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private enum Code: String, Hashable, Sendable {
            case wrongLastSequence = "wrong last sequence"
            case streamNotFound = "stream not found"
            case streamNameInUse = "stream name already in use"
            case messageNotFound = "message not found"
            case consumerNotFound = "consumer not found"
            case noStream = "no stream for the subject"
            case timeout
            case connection
            case api = "API error"
            case badResponse = "bad response"
        }

        private let code: Code
        private init(_ code: Code) { self.code = code }

        /// A compare-and-set publish found another last sequence (err_code 10071).
        public static let wrongLastSequence = Kind(.wrongLastSequence)
        /// The stream named does not exist (err_code 10059).
        public static let streamNotFound = Kind(.streamNotFound)
        /// A stream of that name exists already with another configuration (err_code 10058).
        public static let streamNameInUse = Kind(.streamNameInUse)
        /// No message has that sequence, or the subject has none (err_code 10037, status 404).
        public static let messageNotFound = Kind(.messageNotFound)
        /// The consumer named does not exist (err_code 10014).
        public static let consumerNotFound = Kind(.consumerNotFound)
        /// A publish's subject belongs to no stream (nobody answered it).
        public static let noStream = Kind(.noStream)
        /// No answer in time, retries included.
        public static let timeout = Kind(.timeout)
        /// The NATS connection failed; `connectionError` says how.
        public static let connection = Kind(.connection)
        /// Another error the API reported; `errorCode` and `reason` say which.
        public static let api = Kind(.api)
        /// The answer was not the JSON the API documents.
        public static let badResponse = Kind(.badResponse)

        /// The kind's name.
        public var description: String { code.rawValue }

        /// The kind of an API error by its `err_code`.
        static func of(errorCode: Int?) -> Kind {
            switch errorCode {
            case 10071?: .wrongLastSequence
            case 10059?: .streamNotFound
            case 10058?: .streamNameInUse
            case 10037?: .messageNotFound
            case 10014?: .consumerNotFound
            default: .api
            }
        }
    }

    /// What kind of failure this is.
    public let kind: Kind
    /// The API's `code` (an HTTP-like status: 400, 404, 503), when it answered with an error.
    public let status: Int?
    /// The API's `err_code`, when it answered with one.
    public let errorCode: Int?
    /// What happened, in words (the API's description when it gave one).
    public let reason: String
    /// The connection's error, for `connection` and `timeout` failures that came from it.
    public let connectionError: NATSError?
    /// The stream that answered, when its answer named it (a refused publish does).
    public let stream: String?

    /// An error of `kind`.
    public init(_ kind: Kind, status: Int? = nil, errorCode: Int? = nil, reason: String, connectionError: NATSError? = nil, stream: String? = nil) {
        self.kind = kind
        self.status = status
        self.errorCode = errorCode
        self.reason = reason
        self.connectionError = connectionError
        self.stream = stream
    }

    /// The error for a failure of the connection under an API call.
    init(_ error: NATSError, doing what: String) {
        let kind: Kind = error.kind == .timeout ? .timeout : .connection
        self.init(kind, reason: "\(what): \(error)", connectionError: error)
    }

    /// `JetStream KIND [err_code N]: REASON`.
    public var description: String {
        let code = errorCode.map { " [err_code \($0)]" } ?? ""
        return "JetStream \(kind)\(code): \(reason)"
    }
}
