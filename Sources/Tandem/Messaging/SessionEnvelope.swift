/// What participants say to each other inside sealed bodies: the session's own presence
/// announcements, and the program's messages tagged with their type.
///
/// Layout: one kind byte; for presence, one byte (1: joined); for a message, the type's name as
/// a big-endian 16-bit length and UTF-8 bytes, then the message's JSON.
enum SessionEnvelope: Equatable {
    /// A participant joined the activity (sent to all on `join()`, and to each newcomer after).
    case presence
    /// A program's message of the type named `type`.
    case message(type: String, payload: [UInt8])

    private static let presenceKind: UInt8 = 1
    private static let messageKind: UInt8 = 2

    var encoded: [UInt8] {
        switch self {
        case .presence:
            return [SessionEnvelope.presenceKind, 1]
        case .message(let type, let payload):
            let name = Array(type.utf8.prefix(Int(UInt16.max)))
            return [SessionEnvelope.messageKind, UInt8(name.count >> 8), UInt8(name.count & 0xFF)] + name + payload
        }
    }

    /// The envelope in `bytes`, or nil when they are not one (a newer version, or garbage).
    init?(decoding bytes: [UInt8]) {
        guard let kind = bytes.first else { return nil }
        switch kind {
        case SessionEnvelope.presenceKind:
            guard bytes.count == 2 else { return nil }
            self = .presence
        case SessionEnvelope.messageKind:
            guard bytes.count >= 3 else { return nil }
            let length = Int(bytes[1]) << 8 | Int(bytes[2])
            guard bytes.count >= 3 + length, let type = String(validating: bytes[3..<(3 + length)], as: UTF8.self) else { return nil }
            self = .message(type: type, payload: Array(bytes[(3 + length)...]))
        default:
            return nil
        }
    }
}
