import Foundation

/// What participants say to each other about streamed media, inside sealed, signed session
/// bodies of kind `BodyKind.mediaStream` (the relay reads none of it).
///
/// Layout: one tag byte, then big-endian fields.
/// - `holding` (1): a flags byte (1: the sender started the session), a count (16 bits), then for
///   each item its name and its content identity, each a 16-bit length and UTF-8.
/// - `request` (2): request id (64), offset (64), length (32), then the identity (16-bit length, UTF-8).
/// - `chunk` (3): request id (64), offset (64), then the bytes.
/// - `refusal` (4): request id (64), a reason byte.
/// - `inquiry` (5): nothing more; each holder answers with its `holding`.
public enum StreamMessage: Sendable, Equatable {
    /// The sender holds these items (content identities, durations aside) and serves them;
    /// `host`: it started the session (readers ask the host first).
    case holding([HeldItem], host: Bool)
    /// Asks for `length` bytes at `offset` of the item whose content identity is `identity`.
    case request(id: UInt64, identity: String, offset: Int64, length: Int)
    /// Part of the reply to request `id`: `bytes` at `offset`.
    case chunk(id: UInt64, offset: Int64, bytes: [UInt8])
    /// Request `id` will not be served, and why.
    case refusal(id: UInt64, reason: StreamRefusal)
    /// Asks every holder what it holds (a participant that just started streaming and missed
    /// the announcements made before).
    case inquiry

    /// The most identities one `holding` names.
    public static let maximumHeld = 256
    /// The longest identity.
    public static let maximumIdentityLength = 512

    private enum Tag: UInt8 {
        case holding = 1, request = 2, chunk = 3, refusal = 4, inquiry = 5
    }

    /// The bytes on the wire.
    public var encoded: [UInt8] {
        var bytes: [UInt8] = []
        func put<I: FixedWidthInteger>(_ value: I) { withUnsafeBytes(of: value.bigEndian) { bytes += $0 } }
        func put(_ text: String) {
            // Cut at a character's start, never inside one: the reader refuses broken UTF-8.
            let limit = StreamMessage.maximumIdentityLength
            let head = Array(text.utf8.prefix(limit + 1))
            var count = min(head.count, limit)
            if head.count > limit { while count > 0 && head[count] & 0xC0 == 0x80 { count -= 1 } }
            let utf8 = Array(head[..<count])
            put(UInt16(utf8.count))
            bytes += utf8
        }
        switch self {
        case .holding(let items, let host):
            bytes.append(Tag.holding.rawValue)
            bytes.append(host ? 1 : 0)
            let listed = items.prefix(StreamMessage.maximumHeld)
            put(UInt16(listed.count))
            for item in listed {
                put(item.name)
                put(item.identity)
            }
        case .request(let id, let identity, let offset, let length):
            bytes.append(Tag.request.rawValue)
            put(id)
            put(offset)
            put(UInt32(clamping: length))
            put(identity)
        case .chunk(let id, let offset, let data):
            bytes.reserveCapacity(17 + data.count)
            bytes.append(Tag.chunk.rawValue)
            put(id)
            put(offset)
            bytes += data
        case .refusal(let id, let reason):
            bytes.append(Tag.refusal.rawValue)
            put(id)
            bytes.append(reason.rawValue)
        case .inquiry:
            bytes.append(Tag.inquiry.rawValue)
        }
        return bytes
    }

    /// The message in `bytes`, or nil when they are not one (garbage, a newer version, or a
    /// field out of bounds).
    public init?(decoding bytes: [UInt8]) {
        var reader = Reader(bytes: bytes)
        guard let raw = reader.byte(), let tag = Tag(rawValue: raw) else { return nil }
        switch tag {
        case .holding:
            guard let flags = reader.byte(), flags <= 1, let count = reader.integer(UInt16.self), Int(count) <= StreamMessage.maximumHeld else { return nil }
            var items: [HeldItem] = []
            for _ in 0..<count {
                guard let name = reader.text(), let identity = reader.text() else { return nil }
                items.append(HeldItem(name: name, identity: identity))
            }
            guard reader.atEnd else { return nil }
            self = .holding(items, host: flags == 1)
        case .request:
            guard let id = reader.integer(UInt64.self), let offset = reader.integer(Int64.self),
                  let length = reader.integer(UInt32.self), let identity = reader.text(), reader.atEnd else { return nil }
            self = .request(id: id, identity: identity, offset: offset, length: Int(length))
        case .chunk:
            guard let id = reader.integer(UInt64.self), let offset = reader.integer(Int64.self) else { return nil }
            self = .chunk(id: id, offset: offset, bytes: reader.rest())
        case .refusal:
            guard let id = reader.integer(UInt64.self), let reason = reader.byte().flatMap(StreamRefusal.init(rawValue:)),
                  reader.atEnd else { return nil }
            self = .refusal(id: id, reason: reason)
        case .inquiry:
            guard reader.atEnd else { return nil }
            self = .inquiry
        }
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0
        var atEnd: Bool { index == bytes.count }

        mutating func byte() -> UInt8? {
            guard index < bytes.count else { return nil }
            defer { index += 1 }
            return bytes[index]
        }

        mutating func integer<I: FixedWidthInteger>(_ type: I.Type) -> I? {
            let width = MemoryLayout<I>.size
            guard bytes.count - index >= width else { return nil }
            var value: I = 0
            for byte in bytes[index..<(index + width)] { value = value << 8 | I(truncatingIfNeeded: byte) }
            index += width
            return value
        }

        mutating func text() -> String? {
            guard let length = integer(UInt16.self), Int(length) <= StreamMessage.maximumIdentityLength,
                  bytes.count - index >= Int(length) else { return nil }
            defer { index += Int(length) }
            return String(validating: bytes[index..<(index + Int(length))], as: UTF8.self)
        }

        mutating func rest() -> [UInt8] {
            defer { index = bytes.count }
            return Array(bytes[index...])
        }
    }
}

/// An item a participant holds: the name the group knows it by (its queue identifier) and its
/// content identity.
public struct HeldItem: Sendable, Hashable {
    /// The group's identifier for it.
    public var name: String
    /// Its content identity (`ContentIdentity`).
    public var identity: String

    /// `identity`, known as `name`.
    public init(name: String, identity: String) {
        self.name = name
        self.identity = identity
    }
}

/// Why a holder does not serve a request.
public enum StreamRefusal: UInt8, Sendable, Equatable, CustomStringConvertible {
    /// It does not hold that item (any more).
    case notHeld = 1
    /// The range is outside the item, empty, or longer than a request may ask.
    case badRange = 2
    /// Too many of the asker's requests wait already: ask again later.
    case busy = 3
    /// The holder could not read its copy.
    case unreadable = 4

    /// A word for people.
    public var description: String {
        switch self {
        case .notHeld: "not held"
        case .badRange: "bad range"
        case .busy: "busy"
        case .unreadable: "unreadable"
        }
    }
}
