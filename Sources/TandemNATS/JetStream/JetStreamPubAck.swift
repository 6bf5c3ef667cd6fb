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

extension JetStreamPubAck {
    /// The acknowledgement in `payload` read without a JSON decoder, when it is the plain
    /// `{"stream":"NAME","seq":N…}` nats-server writes for a message newly stored; nil for
    /// anything else (an error, a duplicate, an escape in the name), which the decoder then reads.
    /// The decoder was most of an acknowledgement's cost, paid on every proposal.
    init?(plain payload: [UInt8]) {
        // A duplicate (nats-server writes `"duplicate": true`, spaced) is rare: left to the decoder.
        guard !JetStream.mentionsError(payload), !payload.contains(UInt8(ascii: "\\")),
              Self.value(after: "\"duplicate\"", in: payload, until: nil) == nil,
              let name = Self.value(after: "\"stream\":\"", in: payload, until: UInt8(ascii: "\"")),
              let digits = Self.value(after: "\"seq\":", in: payload, until: nil),
              let sequence = UInt64(String(decoding: digits, as: UTF8.self)) else { return nil }
        self.init(stream: String(decoding: name, as: UTF8.self), sequence: sequence, duplicate: false)
    }

    /// The bytes after the first `key` in `payload`, up to `end` (or while they are digits when
    /// `end` is nil); nil without the key.
    private static func value(after key: String, in payload: [UInt8], until end: UInt8?) -> ArraySlice<UInt8>? {
        let key = Array(key.utf8)
        guard payload.count >= key.count else { return nil }
        for start in 0...(payload.count - key.count) where payload[start..<start + key.count].elementsEqual(key) {
            var index = start + key.count
            let from = index
            while index < payload.count, end.map({ payload[index] != $0 }) ?? (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(payload[index]) {
                index += 1
            }
            if let end, index == payload.count || payload[index] != end { return nil }
            return payload[from..<index]
        }
        return nil
    }
}
