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
