import Foundation
import TandemNet

/// An invite to a session: everything needed to join it, as a URL to pass on.
///
/// `tandem://HOST:PORT/SESSION?k=SECRET`: the relay's address, the session's identity and its
/// secret (base64url). Whoever holds it can join and read; the relay admits only those who prove
/// they hold the secret, and never learns the key that seals the session's messages.
///
/// An invite may name further relays that serve the session, in the query so that it stays a
/// valid URL: `tandem://H1:P1/SESSION?k=SECRET&r=H2:P2&r=[::1]:P3`, at most
/// `RelayEndpoint.maximumCount` in all. `host` and `port` are the first; a participant starts at a
/// random one of `relays` and moves to another when it fails.
///
/// An invite names the session's creator too, first in the query (`?o=ID&k=SECRET`): its
/// participant identity, which its signing key certifies, so that every invitee knows who the
/// first operator is (`GroupSession.roles`) without trusting the relay for it.
///
/// After an operator removed someone or rekeyed the session, the invite carries the newest
/// epoch's secret and names its epoch (`&e=N`, absent for epoch 0): a joiner seals under it and
/// learns the older epochs' keys from the history (`RoleChange.epochHistory`).
public struct Invitation: Sendable, Hashable, CustomStringConvertible {
    /// The first relay's host name or address (IPv6 without brackets).
    public var host: String
    /// The first relay's port.
    public var port: UInt16
    /// The session.
    public var sessionID: UUID
    /// The session's secret.
    public var secret: SessionSecret
    /// The relays after the first (`r=` in the query), in order, none repeated.
    public private(set) var furtherRelays: [RelayEndpoint] = []
    /// The session's creator, its first operator (`o=` in the query); nil in an invite that
    /// names none, whose session then has no operator.
    public var creator: UUID?
    /// The epoch whose secret `secret` is (`e=` in the query; 0 when absent).
    public var epoch: UInt16 = 0
    /// The invite's ticket when its session's invites expire (`x=` in the query): the expiry,
    /// signed with the creator's key, which the relay checks on its clock (`InviteTicket`).
    public var ticket: [UInt8]?

    /// When the invite stops admitting, nil when it does not expire.
    public var expiry: Date? {
        ticket.flatMap(InviteTicket.expiry(of:)).map { Date(timeIntervalSince1970: TimeInterval($0)) }
    }

    /// An invite to `sessionID` on the relay at `host`:`port`.
    public init(host: String, port: UInt16, sessionID: UUID, secret: SessionSecret) {
        self.host = host
        self.port = port
        self.sessionID = sessionID
        self.secret = secret
    }

    /// An invite to `sessionID` on `relays` (the first where the session was created): a
    /// repeated relay is dropped; none, or more than `RelayEndpoint.maximumCount`, is an error.
    public init(relays: [RelayEndpoint], sessionID: UUID, secret: SessionSecret) throws(InvitationError) {
        guard let first = relays.first else { throw InvitationError("an invite names at least one relay") }
        var unique: [RelayEndpoint] = []
        for relay in relays { unique = RelayEndpoint.appending(relay, to: unique) }
        guard unique.count <= RelayEndpoint.maximumCount else {
            throw InvitationError("an invite names at most \(RelayEndpoint.maximumCount) relays, not \(unique.count)")
        }
        self.init(host: first.host, port: first.port, sessionID: sessionID, secret: secret)
        furtherRelays = Array(unique.dropFirst())
    }

    /// Every relay of the session, the first (`host`:`port`) first.
    public var relays: [RelayEndpoint] { [RelayEndpoint(host: host, port: port)] + furtherRelays }

    /// The invite as a URL.
    public var url: URL { URL(string: description)! }

    /// A line for people to read.
    public var description: String {
        let hostPart = host.contains(":") ? "[\(host)]" : host
        let further = furtherRelays.map { "&r=\($0)" }.joined()
        let creatorPart = creator.map { "o=\($0.uuidString.lowercased())&" } ?? ""
        let epochPart = epoch == 0 ? "" : "&e=\(epoch)"
        let ticketPart = ticket.map { "&x=\(Base64URL.encode($0))" } ?? ""
        return "tandem://\(hostPart):\(port)/\(sessionID.uuidString.lowercased())?\(creatorPart)k=\(secret.text)\(epochPart)\(ticketPart)\(further)"
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
        let items = components.queryItems ?? []
        guard let key = items.first(where: { $0.name == "k" })?.value else {
            throw InvitationError("the invite carries no secret (k=)")
        }
        guard let secret = SessionSecret(text: key) else { throw InvitationError("the invite's secret is malformed") }
        // The further relays, `r=HOST:PORT` each; a relay named twice counts once. No error
        // echoes a value: an invite's query carries its secret.
        var relays = [RelayEndpoint(host: host, port: UInt16(port))]
        let further = items.filter { $0.name == "r" }
        for (index, item) in further.enumerated() {
            guard let relay = item.value.flatMap({ RelayEndpoint(parsing: Substring($0)) }) else {
                throw InvitationError("the invite's further relay \(index + 1) (r=) is not HOST:PORT (an IPv6 address in brackets)")
            }
            relays = RelayEndpoint.appending(relay, to: relays)
            guard relays.count <= RelayEndpoint.maximumCount else {
                throw InvitationError("the invite names more than \(RelayEndpoint.maximumCount) relays")
            }
        }
        try self.init(relays: relays, sessionID: sessionID, secret: secret)
        let creators = items.filter { $0.name == "o" }
        guard creators.count <= 1 else { throw InvitationError("the invite names its creator (o=) more than once") }
        if let creator = creators.first {
            guard let id = creator.value.flatMap(UUID.init(uuidString:)) else {
                throw InvitationError("the invite's creator (o=) is not a participant identity")
            }
            self.creator = id
        }
        let epochs = items.filter { $0.name == "e" }
        guard epochs.count <= 1 else { throw InvitationError("the invite names its epoch (e=) more than once") }
        if let epoch = epochs.first {
            guard let number = epoch.value.flatMap(UInt16.init) else { throw InvitationError("the invite's epoch (e=) is not a number from 0 to 65535") }
            self.epoch = number
        }
        let tickets = items.filter { $0.name == "x" }
        guard tickets.count <= 1 else { throw InvitationError("the invite carries its ticket (x=) more than once") }
        if let ticket = tickets.first {
            guard let bytes = ticket.value.flatMap(Base64URL.decode), InviteTicket.expiry(of: bytes) != nil else {
                throw InvitationError("the invite's ticket (x=) is malformed")
            }
            self.ticket = bytes
        }
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
