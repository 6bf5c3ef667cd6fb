/// A parsed `nats://` URL: the servers to try, in order, and the credentials for all of them.
///
/// Accepted forms: `nats://HOST:PORT`, `nats://USER:PASS@HOST:PORT`, `nats://TOKEN@HOST:PORT`,
/// with more servers after commas (`nats://u:p@H1:P1,H2:P2` or `…,nats://H2:P2`); the port
/// defaults to 4222; user, password and token may be percent-encoded.
public struct NATSURL: Sendable, Hashable, CustomStringConvertible {
    /// The servers, in the order given.
    public var servers: [NATSServerAddress]
    /// The credentials the `CONNECT` carries.
    public var credentials: Credentials

    /// Credentials for the servers.
    public enum Credentials: Sendable, Hashable {
        /// None.
        case none
        /// A user and password.
        case userPassword(user: String, password: String)
        /// An authorization token.
        case token(String)
    }

    /// These servers with these credentials.
    public init(servers: [NATSServerAddress], credentials: Credentials = .none) {
        self.servers = servers
        self.credentials = credentials
    }

    /// Parses `text`; throws `invalidURL` saying what is wrong.
    public init(parsing text: String) throws(NATSError) {
        let trimmed = text.trimmingSpaces
        guard trimmed.lowercased().hasPrefix("nats://") else {
            throw NATSError(.invalidURL, reason: "'\(text)' does not start with nats://")
        }
        var credentials = Credentials.none
        var servers: [NATSServerAddress] = []
        for (index, part) in trimmed.split(separator: ",", omittingEmptySubsequences: false).enumerated() {
            var item = part.trimmingSpaces
            if item.lowercased().hasPrefix("nats://") { item = String(item.dropFirst("nats://".count)) }
            guard !item.isEmpty else { throw NATSError(.invalidURL, reason: "'\(text)': server \(index + 1) is empty") }
            if let at = item.lastIndex(of: "@") {
                let userInfo = String(item[..<at])
                item = String(item[item.index(after: at)...])
                let parsed = try NATSURL.credentials(userInfo, in: text)
                if credentials != .none, parsed != credentials {
                    throw NATSError(.invalidURL, reason: "'\(text)': the servers give different credentials")
                }
                credentials = parsed
            }
            guard !item.contains("/") else {
                throw NATSError(.invalidURL, reason: "'\(text)': a server '\(item)' has a path; expected HOST:PORT")
            }
            servers.append(try NATSServerAddress(parsing: item))
        }
        self.init(servers: servers, credentials: credentials)
    }

    private static func credentials(_ userInfo: String, in text: String) throws(NATSError) -> Credentials {
        guard !userInfo.isEmpty else { throw NATSError(.invalidURL, reason: "'\(text)': empty credentials before '@'") }
        if let colon = userInfo.firstIndex(of: ":") {
            let user = try decode(String(userInfo[..<colon]), in: text)
            let password = try decode(String(userInfo[userInfo.index(after: colon)...]), in: text)
            guard !user.isEmpty else { throw NATSError(.invalidURL, reason: "'\(text)': the user is empty") }
            return .userPassword(user: user, password: password)
        }
        return .token(try decode(userInfo, in: text))
    }

    /// Percent-decodes `part`.
    private static func decode(_ part: String, in text: String) throws(NATSError) -> String {
        var bytes: [UInt8] = []
        var iterator = Array(part.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = iterator.next(), let low = iterator.next(),
                  let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) else {
                throw NATSError(.invalidURL, reason: "'\(text)': a bad percent escape in the credentials")
            }
            bytes.append(value)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The URL with any password or token replaced by `***`, safe to print.
    public var description: String {
        let userInfo: String
        switch credentials {
        case .none: userInfo = ""
        case let .userPassword(user, _): userInfo = "\(user):***@"
        case .token: userInfo = "***@"
        }
        return "nats://" + userInfo + servers.map(\.description).joined(separator: ",")
    }
}

extension StringProtocol {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
