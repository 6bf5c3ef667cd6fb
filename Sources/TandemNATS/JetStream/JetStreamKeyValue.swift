/// A key-value view on a stream, as NATS's KV buckets are: the stream `KV_<bucket>` on subjects
/// `$KV.<bucket>.<key>`, keeping `history` values a key; a key's revision is the stream
/// sequence of its latest value, and `update` is a compare-and-set on it.
public struct JetStreamKeyValue: Sendable {
    /// The JetStream the bucket lives in.
    public let jetStream: JetStream
    /// The bucket's name.
    public let bucket: String

    /// A key's latest value and its revision.
    public struct Entry: Sendable, Hashable {
        /// The key.
        public var key: String
        /// The value's bytes.
        public var value: [UInt8]
        /// The stream sequence that stored it.
        public var revision: UInt64

        /// An entry with these parts.
        public init(key: String, value: [UInt8], revision: UInt64) {
            self.key = key
            self.value = value
            self.revision = revision
        }
    }

    /// The view on bucket `bucket` (created by `createBucket` or another client).
    public init(jetStream: JetStream, bucket: String) {
        self.jetStream = jetStream
        self.bucket = bucket
    }

    /// The backing stream's name.
    public var streamName: String { "KV_\(bucket)" }

    /// Creates the bucket's stream (`history` values a key, `replicas` copies); nothing when it
    /// exists with the same configuration.
    @discardableResult
    public static func createBucket(_ bucket: String, in jetStream: JetStream, history: Int = 1, replicas: Int = 1,
                                    storage: JetStreamStorage = .file) async throws(JetStreamError) -> JetStreamKeyValue {
        let view = JetStreamKeyValue(jetStream: jetStream, bucket: try JetStream.checkName(bucket))
        try await jetStream.createStream(JetStreamStreamConfiguration(
            name: view.streamName, subjects: ["$KV.\(bucket).>"], storage: storage, replicas: replicas,
            maximumMessagesPerSubject: max(history, 1), duplicateWindow: 120_000_000_000, allowDirect: true))
        return view
    }

    /// Stores `value` under `key` whatever was there; returns the new revision.
    @discardableResult
    public func put(_ key: String, _ value: [UInt8]) async throws(JetStreamError) -> UInt64 {
        try await jetStream.publish(try subject(key), payload: value).sequence
    }

    /// Stores `value` under `key` only if its latest revision is `revision` (0: the key has
    /// none); returns the new revision, or throws `wrongLastSequence`.
    @discardableResult
    public func update(_ key: String, _ value: [UInt8], expectedRevision revision: UInt64) async throws(JetStreamError) -> UInt64 {
        try await jetStream.publish(try subject(key), payload: value, options: JetStreamPublishOptions(expectedLastSubjectSequence: revision)).sequence
    }

    /// The latest value of `key`, nil when it has none or was deleted.
    public func get(_ key: String) async throws(JetStreamError) -> Entry? {
        let message: JetStreamStoredMessage
        do {
            message = try await jetStream.lastMessage(stream: streamName, subject: try subject(key))
        } catch where error.kind == .messageNotFound {
            return nil
        }
        if let operation = message.headers?["KV-Operation"], operation == "DEL" || operation == "PURGE" { return nil }
        return Entry(key: key, value: message.payload, revision: message.sequence)
    }

    /// Deletes `key` (a delete marker, as NATS KV writes); returns the marker's revision.
    @discardableResult
    public func delete(_ key: String) async throws(JetStreamError) -> UInt64 {
        var headers = NATSHeaders()
        headers["KV-Operation"] = "DEL"
        return try await jetStream.publish(try subject(key), payload: [], headers: headers).sequence
    }

    private func subject(_ key: String) throws(JetStreamError) -> String {
        let subject = "$KV.\(bucket).\(key)"
        do {
            try NATSEncoder.checkSubject(subject, wildcards: false)
        } catch {
            throw JetStreamError(.api, reason: "'\(key)' is not a key: \(error.reason)")
        }
        return subject
    }
}
