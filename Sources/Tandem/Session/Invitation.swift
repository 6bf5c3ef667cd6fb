import Foundation

/// An invite to a session: everything needed to join it, as a URL to pass on.
///
/// `tandem://HOST:PORT/SESSION?k=SECRET`: the relay's address, the session's identity and its
/// secret (base64url). Whoever holds it can join and read; the relay admits only those who prove
/// they hold the secret, and never learns the key that seals the session's messages.
public struct Invitation: Sendable, Hashable, CustomStringConvertible {
    /// The relay's host name or address (IPv6 without brackets).
    public var host: String
    /// The relay's port.
    public var port: UInt16
    /// The session.
    public var sessionID: UUID
    /// The session's secret.
    public var secret: SessionSecret

    /// An invite to `sessionID` on the relay at `host`:`port`.
    public init(host: String, port: UInt16, sessionID: UUID, secret: SessionSecret) {
        self.host = host
        self.port = port
        self.sessionID = sessionID
        self.secret = secret
    }

    /// The invite as a URL.
    public var url: URL { URL(string: description)! }

    /// A line for people to read.
    public var description: String {
        let hostPart = host.contains(":") ? "[\(host)]" : host
        return "tandem://\(hostPart):\(port)/\(sessionID.uuidString.lowercased())?k=\(secret.text)"
    }

    /// Reads an invite from its URL text; throws a clear error for anything else.
    public init(parsing text: String) throws(InvitationError) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let components = URLComponents(string: trimmed), components.scheme == "tandem" else {
            throw InvitationError("not a tandem:// invite: \(Invitation.redacted(trimmed))")
        }
        guard var host = components.host, !host.isEmpty else { throw InvitationError("the invite has no relay host") }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard let port = components.port, (1...65535).contains(port) else {
            throw InvitationError("the invite has no relay port")
        }
        let path = components.path.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        guard let sessionID = UUID(uuidString: path) else { throw InvitationError("the invite names no session") }
        guard let key = components.queryItems?.first(where: { $0.name == "k" })?.value else {
            throw InvitationError("the invite carries no secret (k=)")
        }
        guard let secret = SessionSecret(text: key) else { throw InvitationError("the invite's secret is malformed") }
        self.init(host: host, port: UInt16(port), sessionID: sessionID, secret: secret)
    }

    /// `text` with the value of every `k=` (an invite's secret) replaced by `…`, and without
    /// control characters: how a message may echo what someone passed as an invite.
    ///
    /// `tandem://relay:7462/SESSION?k=SECRET` becomes `tandem://relay:7462/SESSION?k=…`. Any
    /// `k=` counts, wherever it appears, so that no mistyped or truncated invite leaks its
    /// secret into a terminal, a log or an error report.
    public static func redacted(_ text: String) -> String {
        let scalars = Array(TerminalText.sanitized(text).unicodeScalars)
        var result = String.UnicodeScalarView()
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            result.append(scalar)
            index += 1
            guard scalar == "k", index < scalars.count, scalars[index] == "=" else { continue }
            result.append("=")
            index += 1
            // The secret runs to the next parameter, fragment, quote or space.
            let start = index
            while index < scalars.count, !"&#'\" <>".unicodeScalars.contains(scalars[index]) { index += 1 }
            if index > start { result.append("…") }
        }
        return String(result)
    }
}

/// An invite that could not be read.
public struct InvitationError: Error, Sendable, CustomStringConvertible {
    /// What is wrong with it.
    public let description: String
    init(_ description: String) { self.description = description }
}
