/// One server a client may connect to: a host (numeric, or a name resolved when connecting) and a port.
public struct NATSServerAddress: Sendable, Hashable, CustomStringConvertible {
    /// The host, without brackets for IPv6.
    public var host: String
    /// The port.
    public var port: UInt16

    /// The server at `host:port`.
    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// `HOST:PORT`, or `[V6]:PORT`.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Parses `HOST:PORT`, `[V6]:PORT`, `HOST` (port 4222), optionally after `nats://`, as
    /// servers announce themselves in `connect_urls`.
    public init(parsing text: String) throws(NATSError) {
        var rest = Substring(text)
        if rest.lowercased().hasPrefix("nats://") { rest = rest.dropFirst("nats://".count) }
        let host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else {
                throw NATSError(.invalidURL, reason: "'\(text)': an IPv6 address lacks its ']'")
            }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw NATSError(.invalidURL, reason: "'\(text)': expected ':PORT' after ']'") }
                portText = after.dropFirst()
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        } else {
            host = rest
        }
        guard !host.isEmpty else { throw NATSError(.invalidURL, reason: "'\(text)': the host is empty") }
        var port: UInt16 = 4222
        if let portText {
            guard let parsed = UInt16(portText), parsed > 0 else {
                throw NATSError(.invalidURL, reason: "'\(text)': '\(portText)' is not a port (1-65535)")
            }
            port = parsed
        }
        self.init(host: String(host), port: port)
    }
}
