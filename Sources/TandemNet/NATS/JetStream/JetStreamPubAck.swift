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
