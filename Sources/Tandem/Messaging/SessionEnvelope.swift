/// What participants say to each other inside sealed bodies: the session's own presence
/// announcements, and the program's messages tagged with their type.
///
/// Layout: one kind byte; for presence, one byte (1: joined) and the sender's display name in
/// UTF-8; for a message, the type's name as a big-endian 16-bit length and UTF-8 bytes, then the
/// message's JSON.
enum SessionEnvelope: Equatable {
    /// A participant joined the activity (sent to all on `join()`, and to each newcomer after),
    /// with its name, so that a receiver that has not yet heard of it from the relay (two joins
    /// crossing) still knows who it is.
    case presence(name: String)
    /// A program's message of the type named `type`.
    case message(type: String, payload: [UInt8])

    private static let presenceKind: UInt8 = 1
    private static let messageKind: UInt8 = 2

    var encoded: [UInt8] {
        switch self {
        case .presence(let name):
            return [SessionEnvelope.presenceKind, 1] + Array(String(name.prefix(200)).utf8)
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
            guard bytes.count >= 2, bytes[1] == 1, bytes.count <= 2 + 1024,
                  let name = String(validating: bytes[2...], as: UTF8.self) else { return nil }
            self = .presence(name: name)
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
