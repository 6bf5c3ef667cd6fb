/// A message a subscription received: its subject, the reply subject if the sender asked for a
/// reply, its headers (from an `HMSG`) and its payload.
public struct NATSMessage: Sendable, Hashable {
    /// The subject it was published to.
    public var subject: String
    /// The subscription it was delivered to (its sid on this connection).
    public var sid: UInt64
    /// Where to send a reply, when the sender asked for one.
    public var replyTo: String?
    /// Its headers; nil for a message published without any (`MSG`, not `HMSG`).
    public var headers: NATSHeaders?
    /// Its payload bytes.
    public var payload: [UInt8]

    /// A message with these parts.
    public init(subject: String, sid: UInt64, replyTo: String? = nil, headers: NATSHeaders? = nil, payload: [UInt8]) {
        self.subject = subject
        self.sid = sid
        self.replyTo = replyTo
        self.headers = headers
        self.payload = payload
    }

    /// The status code of its header line (503 no responders, 408 timeout, 100 heartbeat or
    /// flow control), when it has one.
    public var status: Int? { headers?.status }
}
