import Foundation

/// What a compare-and-set or plain JetStream publish returns: the stream that stored it, its
/// sequence there, and whether it was a duplicate of a message id already stored (then nothing
/// new was stored and `sequence` is the original's).
public struct JetStreamPubAck: Sendable, Hashable, Decodable {
    /// The stream that stored the message.
    public var stream: String
    /// Its sequence in the stream.
    public var sequence: UInt64
    /// Whether the message id was seen within the stream's duplicate window.
    public var duplicate: Bool

    private enum CodingKeys: String, CodingKey { case stream, sequence = "seq", duplicate }

    /// Decodes `{"stream":…,"seq":…,"duplicate":…}`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        stream = try container.decode(String.self, forKey: .stream)
        sequence = try container.decode(UInt64.self, forKey: .sequence)
        duplicate = try container.decodeIfPresent(Bool.self, forKey: .duplicate) ?? false
    }

    /// An acknowledgement with these values.
    public init(stream: String, sequence: UInt64, duplicate: Bool) {
        self.stream = stream
        self.sequence = sequence
        self.duplicate = duplicate
    }
}

/// The conditions and identity of a JetStream publish, and how long it may be retried.
public struct JetStreamPublishOptions: Sendable, Hashable {
    /// `Nats-Msg-Id`: a retry with the same id within the duplicate window stores nothing new.
    public var messageID: String?
    /// `Nats-Expected-Last-Subject-Sequence`: stored only if the subject's last message has this
    /// sequence (0: the subject has none yet).
    public var expectedLastSubjectSequence: UInt64?
    /// `Nats-Expected-Last-Sequence`: stored only if the stream's last message has this sequence.
    public var expectedLastSequence: UInt64?
    /// `Nats-Expected-Stream`: stored only by this stream.
    public var expectedStream: String?
    /// How long one attempt waits for its acknowledgement.
    public var attemptTimeout: Duration
    /// How long a publish with a message id keeps retrying (after timeouts, a lost connection,
    /// a stream without a leader for the moment); without a message id there is one attempt,
    /// since a retry could store the message twice.
    public var retryWindow: Duration
    /// Whether an earlier call may have stored this message (same id) already, as when a relay
    /// sends again what it proposed before it lost track: a wrong last sequence is then checked
    /// against the message that moved it, and if that is this one, the publish succeeds as a
    /// duplicate. Retries within one call do this by themselves after a timeout.
    public var mayHaveBeenStored: Bool

    /// Options with these values; by default an attempt waits 2 s and retries go on for 10 s.
    public init(messageID: String? = nil, expectedLastSubjectSequence: UInt64? = nil, expectedLastSequence: UInt64? = nil,
                expectedStream: String? = nil, attemptTimeout: Duration = .seconds(2), retryWindow: Duration = .seconds(10),
                mayHaveBeenStored: Bool = false) {
        self.messageID = messageID
        self.expectedLastSubjectSequence = expectedLastSubjectSequence
        self.expectedLastSequence = expectedLastSequence
        self.expectedStream = expectedStream
        self.attemptTimeout = attemptTimeout
        self.retryWindow = retryWindow
        self.mayHaveBeenStored = mayHaveBeenStored
    }

    /// `headers` with the options' JetStream headers added.
    func applied(to headers: NATSHeaders?) -> NATSHeaders? {
        var result = headers ?? NATSHeaders()
        if let messageID { result["Nats-Msg-Id"] = messageID }
        if let expectedLastSubjectSequence { result["Nats-Expected-Last-Subject-Sequence"] = String(expectedLastSubjectSequence) }
        if let expectedLastSequence { result["Nats-Expected-Last-Sequence"] = String(expectedLastSequence) }
        if let expectedStream { result["Nats-Expected-Stream"] = expectedStream }
        return result.isEmpty && headers == nil ? nil : result
    }
}

/// A message as a stream stores it: its subject, sequence, headers, payload and the time it was
/// stored.
public struct JetStreamStoredMessage: Sendable, Hashable {
    /// The subject it was published to.
    public var subject: String
    /// Its sequence in the stream.
    public var sequence: UInt64
    /// Its headers (JetStream's own, such as `Nats-Msg-Id`, included), nil when none.
    public var headers: NATSHeaders?
    /// Its payload.
    public var payload: [UInt8]
    /// When the stream stored it, as the server's RFC 3339 text.
    public var time: String?

    /// A stored message with these parts.
    public init(subject: String, sequence: UInt64, headers: NATSHeaders? = nil, payload: [UInt8], time: String? = nil) {
        self.subject = subject
        self.sequence = sequence
        self.headers = headers
        self.payload = payload
        self.time = time
    }
}

/// The `message` of a `$JS.API.STREAM.MSG.GET` answer: base64 headers and data.
struct JetStreamRawMessage: Decodable {
    var subject: String
    var seq: UInt64
    var hdrs: String?
    var data: String?
    var time: String?

    func stored() throws(JetStreamError) -> JetStreamStoredMessage {
        var headers: NATSHeaders?
        if let hdrs {
            guard let bytes = Data(base64Encoded: hdrs) else { throw JetStreamError(.badResponse, reason: "a stored message's headers are not base64") }
            do {
                headers = try NATSHeaders.parse(Array(bytes)[...])
            } catch {
                throw JetStreamError(.badResponse, reason: "a stored message's headers: \(error.reason)")
            }
        }
        var payload: [UInt8] = []
        if let data {
            guard let bytes = Data(base64Encoded: data) else { throw JetStreamError(.badResponse, reason: "a stored message's data is not base64") }
            payload = Array(bytes)
        }
        return JetStreamStoredMessage(subject: subject, sequence: seq, headers: headers, payload: payload, time: time)
    }
}
