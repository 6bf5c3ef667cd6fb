/// How a stream stores messages.
public enum JetStreamStorage: String, Sendable, Hashable, Codable {
    /// On disk, surviving restarts.
    case file
    /// In memory.
    case memory
}

/// A stream's configuration: what `$JS.API.STREAM.CREATE` and `UPDATE` take. Limits left nil
/// are unlimited.
public struct JetStreamStreamConfiguration: Sendable, Hashable, Codable {
    /// The stream's name (no spaces, dots, `*` or `>`).
    public var name: String
    /// The subjects it captures (wildcards allowed).
    public var subjects: [String]
    /// File or memory.
    public var storage: JetStreamStorage
    /// How many servers keep a copy (1, 3 or 5; the stream leader is one of them).
    public var replicas: Int
    /// At most this many messages a subject; older ones go.
    public var maximumMessagesPerSubject: Int?
    /// At most this many messages in all.
    public var maximumMessages: Int?
    /// At most this many bytes in all.
    public var maximumBytes: Int?
    /// The largest message accepted.
    public var maximumMessageSize: Int?
    /// How long a message id (`Nats-Msg-Id`) is remembered to drop a duplicate, in nanoseconds.
    public var duplicateWindow: Int64?
    /// Whether any replica answers direct gets (`$JS.API.DIRECT.GET`), not only the leader.
    public var allowDirect: Bool
    /// At a limit, whether new messages are refused (`discard: new`) rather than the oldest
    /// dropped (`old`).
    public var discardsNew: Bool

    /// A stream named `name` on `subjects`.
    public init(name: String, subjects: [String], storage: JetStreamStorage = .file, replicas: Int = 1,
                maximumMessagesPerSubject: Int? = nil, maximumMessages: Int? = nil, maximumBytes: Int? = nil,
                maximumMessageSize: Int? = nil, duplicateWindow: Int64? = nil, allowDirect: Bool = false, discardsNew: Bool = false) {
        self.name = name
        self.subjects = subjects
        self.storage = storage
        self.replicas = replicas
        self.maximumMessagesPerSubject = maximumMessagesPerSubject
        self.maximumMessages = maximumMessages
        self.maximumBytes = maximumBytes
        self.maximumMessageSize = maximumMessageSize
        self.duplicateWindow = duplicateWindow
        self.allowDirect = allowDirect
        self.discardsNew = discardsNew
    }

    private enum CodingKeys: String, CodingKey {
        case name, subjects, storage, replicas = "num_replicas", maximumMessagesPerSubject = "max_msgs_per_subject"
        case maximumMessages = "max_msgs", maximumBytes = "max_bytes", maximumMessageSize = "max_msg_size"
        case duplicateWindow = "duplicate_window", allowDirect = "allow_direct", retention, discard, maxConsumers = "max_consumers"
        case maxAge = "max_age"
    }

    /// Decodes the configuration the API returns (-1 meaning unlimited).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func limit(_ key: CodingKeys) throws -> Int? {
            guard let value = try container.decodeIfPresent(Int.self, forKey: key), value >= 0 else { return nil }
            return value
        }
        name = try container.decode(String.self, forKey: .name)
        subjects = try container.decodeIfPresent([String].self, forKey: .subjects) ?? []
        storage = try container.decodeIfPresent(JetStreamStorage.self, forKey: .storage) ?? .file
        replicas = try container.decodeIfPresent(Int.self, forKey: .replicas) ?? 1
        maximumMessagesPerSubject = try limit(.maximumMessagesPerSubject)
        maximumMessages = try limit(.maximumMessages)
        maximumBytes = try limit(.maximumBytes)
        maximumMessageSize = try limit(.maximumMessageSize)
        duplicateWindow = try container.decodeIfPresent(Int64.self, forKey: .duplicateWindow)
        allowDirect = try container.decodeIfPresent(Bool.self, forKey: .allowDirect) ?? false
        discardsNew = try container.decodeIfPresent(String.self, forKey: .discard) == "new"
    }

    /// Encodes every field the API wants, -1 for unlimited, limits retention, discarding old
    /// unless `discardsNew`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(subjects, forKey: .subjects)
        try container.encode(storage, forKey: .storage)
        try container.encode(replicas, forKey: .replicas)
        try container.encode(maximumMessagesPerSubject ?? -1, forKey: .maximumMessagesPerSubject)
        try container.encode(maximumMessages ?? -1, forKey: .maximumMessages)
        try container.encode(maximumBytes ?? -1, forKey: .maximumBytes)
        try container.encode(maximumMessageSize ?? -1, forKey: .maximumMessageSize)
        try container.encodeIfPresent(duplicateWindow, forKey: .duplicateWindow)
        try container.encode(allowDirect, forKey: .allowDirect)
        try container.encode("limits", forKey: .retention)
        try container.encode(discardsNew ? "new" : "old", forKey: .discard)
        try container.encode(-1, forKey: .maxConsumers)
        try container.encode(0, forKey: .maxAge)
    }
}
