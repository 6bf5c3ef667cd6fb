#if canImport(Glibc)
import Glibc
#endif

/// An IPv4 or IPv6 address with a port, as the socket calls take it.
public struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address in `sockaddr_in` or `sockaddr_in6` layout.
    private let bytes: [UInt8]

    /// The address family: `AF_INET` or `AF_INET6`.
    public var family: Int32 {
        bytes.withUnsafeBytes { Int32($0.loadUnaligned(as: sockaddr.self).sa_family) }
    }

    /// Parses a numeric address (`127.0.0.1`, `::1`; `localhost` means `127.0.0.1`) and a port.
    public init(host: String, port: UInt16) throws(AddressError) {
        let name = host == "localhost" ? "127.0.0.1" : host
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, name, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            bytes = withUnsafeBytes(of: v4) { Array($0) }
            return
        }
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET6, name, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            bytes = withUnsafeBytes(of: v6) { Array($0) }
            return
        }
        throw AddressError(text: host, reason: "not a numeric IPv4 or IPv6 address")
    }

    /// Parses `HOST:PORT` or `[IPV6]:PORT`.
    public init(parsing text: String) throws(AddressError) {
        let host: Substring
        let portText: Substring
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { throw AddressError(text: text, reason: "missing :PORT") }
            portText = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw AddressError(text: text, reason: "missing :PORT") }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard let port = UInt16(portText) else { throw AddressError(text: text, reason: "'\(portText)' is not a port") }
        try self.init(host: String(host), port: port)
    }

    /// Wraps an address that the kernel filled in.
    package init?(storage: sockaddr_storage, length: socklen_t) {
        let family = Int32(storage.ss_family)
        guard family == AF_INET || family == AF_INET6 else { return nil }
        bytes = withUnsafeBytes(of: storage) { Array($0.prefix(Int(length))) }
    }

    /// The port number.
    public var port: UInt16 {
        bytes.withUnsafeBytes { raw in
            family == AF_INET
                ? UInt16(bigEndian: raw.loadUnaligned(as: sockaddr_in.self).sin_port)
                : UInt16(bigEndian: raw.loadUnaligned(as: sockaddr_in6.self).sin6_port)
        }
    }

    /// The numeric host, without the port.
    public var host: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        bytes.withUnsafeBytes { raw in
            if family == AF_INET {
                var address = raw.loadUnaligned(as: sockaddr_in.self).sin_addr
                _ = inet_ntop(AF_INET, &address, &text, socklen_t(text.count))
            } else {
                var address = raw.loadUnaligned(as: sockaddr_in6.self).sin6_addr
                _ = inet_ntop(AF_INET6, &address, &text, socklen_t(text.count))
            }
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The address's own bytes in network order, without the port: 4 for IPv4, 16 for IPv6.
    var addressBytes: [UInt8] {
        bytes.withUnsafeBytes { raw in
            if family == AF_INET {
                return withUnsafeBytes(of: raw.loadUnaligned(as: sockaddr_in.self).sin_addr) { Array($0) }
            }
            return withUnsafeBytes(of: raw.loadUnaligned(as: sockaddr_in6.self).sin6_addr) { Array($0) }
        }
    }

    /// `HOST:PORT`, with brackets around an IPv6 host.
    public var description: String {
        family == AF_INET6 ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// Calls `body` with the address as the socket calls want it.
    func withSockaddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        var storage = sockaddr_storage()
        withUnsafeMutableBytes(of: &storage) { raw in raw.copyBytes(from: bytes) }
        return withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                body(address, socklen_t(bytes.count))
            }
        }
    }
}
