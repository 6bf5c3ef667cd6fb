import Foundation

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
