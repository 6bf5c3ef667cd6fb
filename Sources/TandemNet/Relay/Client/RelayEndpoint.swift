import Foundation

/// Where a relay listens: a host (a name or a numeric address, IPv6 without brackets) and a port,
/// for TCP and UDP alike.
///
/// A session's invite names one or more of them (`tandem://H1:P1/SESSION?k=…&r=H2:P2`); a link
/// starts at one and moves to the next when it fails (`NetworkRelayConnector`).
public struct RelayEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// The relay's host name or address (IPv6 without brackets).
    public var host: String
    /// The relay's port (never 0).
    public var port: UInt16

    /// The most relays one list (an invite, `--relay`) may name: enough for a cluster's front
    /// doors, few enough that trying each in turn stays quick.
    public static let maximumCount = 8

    /// The relay at `host`:`port`.
    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// `HOST:PORT`, with an IPv6 address in brackets: `[::1]:7462`.
    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// Reads `HOST:PORT` or `[IPV6]:PORT`; nil for anything else (no host, no port, port 0, an
    /// IPv6 address without brackets, spaces or URL delimiters in the host).
    public init?(parsing text: Substring) {
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":"), host.contains(":") else { return nil }
            portText = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            // An IPv6 address needs its brackets, or its last group would read as the port.
            guard !host.contains(":") else { return nil }
        }
        guard !host.isEmpty, host.unicodeScalars.allSatisfy(RelayEndpoint.isHostScalar),
              portText.allSatisfy({ ("0"..."9").contains($0) }), let port = UInt16(portText), port != 0 else { return nil }
        self.init(host: String(host), port: port)
    }

    /// Reads a comma-separated list of `HOST:PORT` (`--relay H1:P1,H2:P2`): in order, a repeated
    /// relay dropped, at most `maximumCount`. The error says which entry is wrong, by position,
    /// without echoing it.
    public static func list(parsing text: String) throws(RelayEndpointListError) -> [RelayEndpoint] {
        let words = text.split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
        var relays: [RelayEndpoint] = []
        for (index, word) in words.enumerated() {
            guard let relay = RelayEndpoint(parsing: Substring(word)) else {
                throw RelayEndpointListError("relay \(index + 1) of \(words.count) is not HOST:PORT (an IPv6 address in brackets, a port from 1 to 65535)")
            }
            relays = RelayEndpoint.appending(relay, to: relays)
            guard relays.count <= maximumCount else {
                throw RelayEndpointListError("more than \(maximumCount) relays")
            }
        }
        return relays
    }

    /// `list` with `relay` at its end, unless it names it already (hosts compared without case).
    public static func appending(_ relay: RelayEndpoint, to list: [RelayEndpoint]) -> [RelayEndpoint] {
        list.contains { $0.port == relay.port && $0.host.lowercased() == relay.host.lowercased() } ? list : list + [relay]
    }

    /// What a host may contain: letters, digits and `.-_:%` (a name, an IPv4 or IPv6 address,
    /// an IPv6 zone), nothing that ends a URL's authority or a list entry.
    private static func isHostScalar(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", ".", "-", "_", ":", "%": true
        default: false
        }
    }
}

/// A relay list that could not be read.
public struct RelayEndpointListError: Error, Sendable, CustomStringConvertible {
    /// What is wrong with it.
    public let description: String
    init(_ description: String) { self.description = description }
}
