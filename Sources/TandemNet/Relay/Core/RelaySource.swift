/// Where a connection comes from, as the relay's fair shares count it: one IPv4 address, or one
/// IPv6 /64 (what one household or one host is usually given, so that one machine cannot pass
/// for many by changing the low bits of its address), with the /48 around a /64 as a wider
/// prefix that many /64s of one network share.
///
/// An IPv4 address written as IPv6 (`::ffff:a.b.c.d`) is that IPv4 address.
public struct RelaySource: Sendable, Hashable, CustomStringConvertible {
    /// The source's key: the IPv4 address, or the /64 prefix (`2001:db8:1:2::/64`).
    public let key: String
    /// The wider prefix a source belongs to (the /48 of an IPv6 /64), nil for IPv4.
    public let wider: String?

    /// The source of `address`.
    public init(_ address: SocketAddress) {
        let bytes = address.addressBytes
        if bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            key = bytes[12..<16].map(String.init).joined(separator: ".")
            wider = nil
        } else if bytes.count == 16 {
            key = RelaySource.prefix(bytes, groups: 4) + "/64"
            wider = RelaySource.prefix(bytes, groups: 3) + "/48"
        } else {
            key = bytes.map(String.init).joined(separator: ".")
            wider = nil
        }
    }

    /// The first `groups` 16-bit groups of an IPv6 address, in hexadecimal, followed by `::`.
    private static func prefix(_ bytes: [UInt8], groups: Int) -> String {
        (0..<groups).map { String(UInt16(bytes[2 * $0]) << 8 | UInt16(bytes[2 * $0 + 1]), radix: 16) }.joined(separator: ":") + "::"
    }

    /// The key.
    public var description: String { key }
}
