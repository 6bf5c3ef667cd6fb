import Foundation

/// An unreliable message or its routing on the relay's UDP port.
///
/// On the wire: the four header bytes (magic `T`, kind, version, flags zero), then the fields. A
/// participant names itself by the secret token its welcome gave it, never by its identity, so
/// that nobody can send in another's name by guessing identities.
public enum RelayDatagram: Sendable, Hashable {
    /// This address wants to receive the token holder's datagrams. Padded on the wire to the
    /// size of the relay's `cookie` answer, so that the answer is never larger than the request.
    case register(token: [UInt8])
    /// Relay → participant: echo this cookie (in a `confirm`) from the same address to bind it.
    case cookie(token: [UInt8], cookie: [UInt8])
    /// Participant → relay: the cookie the relay answered a registration with, echoed.
    case confirm(token: [UInt8], cookie: [UInt8])
    /// The relay bound (or refreshed) the registration of `token`.
    case registered(token: [UInt8])
    /// A message to route to `recipients`.
    case unreliable(token: [UInt8], recipients: RelayRecipientList, body: [UInt8])
    /// A message from `sender`.
    case delivery(sender: UUID, body: [UInt8])

    /// The largest datagram a participant or the relay sends, in bytes: under IPv4's largest UDP
    /// payload (65,507 bytes) with room for IPv6's larger headers.
    public static let maximumSize = 65_000
    /// The largest body a `delivery` can carry (a message larger goes over TCP instead).
    public static let maximumBody = maximumSize - 4 - 16 - 4

    /// The size of a registration cookie: an 8-byte issue time and a 32-byte MAC.
    public static let cookieLength = 40

    private static let context = "relay datagram"

    /// Decodes a datagram; any defect is a `WireError`.
    public static func decode(_ bytes: ArraySlice<UInt8>) throws(WireError) -> RelayDatagram {
        guard bytes.count <= maximumSize else {
            throw WireError(.oversized(length: bytes.count, limit: maximumSize), context: context)
        }
        var reader = ByteReader(bytes, context: context)
        let magic = try reader.uint8()
        guard magic == DatagramHeader.magic else { throw WireError(.badMagic(magic), context: context) }
        let kindByte = try reader.uint8()
        guard let kind = RelayDatagramKind(rawValue: kindByte) else {
            throw WireError(.unknownType(kindByte), context: context)
        }
        let version = try reader.uint8()
        guard version == RelayFrame.version else { throw WireError(.unsupportedVersion(version), context: context) }
        _ = try reader.uint8()
        let datagram: RelayDatagram
        switch kind {
        case .register:
            datagram = .register(token: try reader.fixed(RelayWireLimits.tokenLength))
            _ = try reader.fixed(cookieLength)
        case .cookie:
            datagram = .cookie(token: try reader.fixed(RelayWireLimits.tokenLength), cookie: try reader.fixed(cookieLength))
        case .confirm:
            datagram = .confirm(token: try reader.fixed(RelayWireLimits.tokenLength), cookie: try reader.fixed(cookieLength))
        case .registered:
            datagram = .registered(token: try reader.fixed(RelayWireLimits.tokenLength))
        case .unreliable:
            let token = try reader.fixed(RelayWireLimits.tokenLength)
            let recipients: RelayRecipientList
            switch try reader.uint8() {
            case 0:
                recipients = .everyone
            case 1:
                let count = try reader.count(limit: RelayWireLimits.maximumRecipients)
                var ids: [UUID] = []
                for _ in 0..<count { ids.append(try reader.uuid()) }
                recipients = .only(ids)
            case let tag:
                throw WireError(.malformed("recipient tag \(tag)"), context: context)
            }
            datagram = .unreliable(token: token, recipients: recipients, body: try reader.bytes(limit: maximumBody))
        case .delivery:
            datagram = .delivery(sender: try reader.uuid(), body: try reader.bytes(limit: maximumBody))
        }
        try reader.finish()
        return datagram
    }

    /// The datagram's bytes.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 64)
        writer.uint8(DatagramHeader.magic)
        writer.uint8(kind.rawValue)
        writer.uint8(RelayFrame.version)
        writer.uint8(0)
        switch self {
        case let .register(token):
            writer.fixed(token)
            writer.fixed([UInt8](repeating: 0, count: RelayDatagram.cookieLength))
        case let .cookie(token, cookie), let .confirm(token, cookie):
            writer.fixed(token)
            writer.fixed(cookie)
        case let .registered(token):
            writer.fixed(token)
        case let .unreliable(token, recipients, body):
            writer.fixed(token)
            switch recipients {
            case .everyone:
                writer.uint8(0)
            case let .only(ids):
                writer.uint8(1)
                writer.uint32(UInt32(ids.count))
                for id in ids { writer.uuid(id) }
            }
            writer.bytes(body)
        case let .delivery(sender, body):
            writer.uuid(sender)
            writer.bytes(body)
        }
        return writer.bytes
    }

    /// The datagram's kind.
    public var kind: RelayDatagramKind {
        switch self {
        case .register: .register
        case .cookie: .cookie
        case .confirm: .confirm
        case .registered: .registered
        case .unreliable: .unreliable
        case .delivery: .delivery
        }
    }
}
