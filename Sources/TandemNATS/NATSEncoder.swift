import Foundation

/// What a client sends: `CONNECT`, `PUB`, `HPUB`, `SUB`, `UNSUB`, `PING` and `PONG`, as bytes.
/// Pure functions; subjects are checked before anything is written, so that a subject with a
/// space cannot smuggle a second operation onto the wire.
package enum NATSEncoder {
    private struct Connect: Encodable {
        let verbose = false
        let pedantic = false
        let tls_required = false
        let headers = true
        let no_responders = true
        let lang = "swift-tandem"
        let version = "1.0"
        let `protocol` = 1
        let name: String?
        let user: String?
        let pass: String?
        let auth_token: String?
    }

    /// `CONNECT {json}\r\n`: verbose and pedantic off, headers and no-responders on.
    package static func connect(name: String?, credentials: NATSURL.Credentials) -> [UInt8] {
        var user: String?, pass: String?, token: String?
        switch credentials {
        case .none: break
        case let .userPassword(name, password): (user, pass) = (name, password)
        case let .token(value): token = value
        }
        let body = Connect(name: name, user: user, pass: pass, auth_token: token)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding a struct of strings, booleans and an integer cannot fail.
        let json = (try? encoder.encode(body)) ?? Data("{}".utf8)
        return Array("CONNECT ".utf8) + Array(json) + [13, 10]
    }

    /// `PUB subject [reply] size\r\npayload\r\n`, or `HPUB subject [reply] hsize tsize\r\n...`
    /// when `headers` is given.
    package static func publish(subject: String, replyTo: String?, headers: NATSHeaders?, payload: [UInt8]) throws(NATSError) -> [UInt8] {
        try checkSubject(subject, wildcards: false)
        if let replyTo { try checkSubject(replyTo, wildcards: false) }
        var bytes: [UInt8]
        let reply = replyTo.map { " " + $0 } ?? ""
        if let headers {
            let block = try headers.encoded()
            bytes = Array("HPUB \(subject)\(reply) \(block.count) \(block.count + payload.count)\r\n".utf8)
            bytes += block
        } else {
            bytes = Array("PUB \(subject)\(reply) \(payload.count)\r\n".utf8)
        }
        bytes += payload
        bytes += [13, 10]
        return bytes
    }

    /// `SUB subject [queue] sid\r\n`.
    package static func subscribe(subject: String, queue: String?, sid: UInt64) throws(NATSError) -> [UInt8] {
        try checkSubject(subject, wildcards: true)
        if let queue { try checkToken(queue, what: "queue group") }
        return Array("SUB \(subject)\(queue.map { " " + $0 } ?? "") \(sid)\r\n".utf8)
    }

    /// `UNSUB sid [max]\r\n`.
    package static func unsubscribe(sid: UInt64, after maximum: Int? = nil) -> [UInt8] {
        Array("UNSUB \(sid)\(maximum.map { " \($0)" } ?? "")\r\n".utf8)
    }

    /// `PING\r\n`.
    package static let ping = Array("PING\r\n".utf8)
    /// `PONG\r\n`.
    package static let pong = Array("PONG\r\n".utf8)

    /// Checks a subject: dot-separated non-empty tokens of printable characters without
    /// whitespace; `*` and `>` only as whole tokens, `>` only last, and only where `wildcards`.
    package static func checkSubject(_ subject: String, wildcards: Bool) throws(NATSError) {
        guard !subject.isEmpty else { throw NATSError(.invalidSubject, reason: "a subject is empty") }
        let tokens = subject.split(separator: ".", omittingEmptySubsequences: false)
        for (index, token) in tokens.enumerated() {
            guard !token.isEmpty else { throw NATSError(.invalidSubject, reason: "subject '\(subject.prefix(128))' has an empty token") }
            guard token.utf8.allSatisfy({ $0 > 32 && $0 != 127 }) else {
                throw NATSError(.invalidSubject, reason: "subject '\(subject.prefix(128))' holds whitespace or control characters")
            }
            let wildcard = token == "*" || token == ">"
            if !wildcards, wildcard {
                throw NATSError(.invalidSubject, reason: "subject '\(subject.prefix(128))' has a wildcard where none may be")
            }
            if token == ">", index != tokens.count - 1 {
                throw NATSError(.invalidSubject, reason: "subject '\(subject.prefix(128))' has '>' before its last token")
            }
        }
    }

    private static func checkToken(_ token: String, what: String) throws(NATSError) {
        guard !token.isEmpty, token.utf8.allSatisfy({ $0 > 32 && $0 != 127 }) else {
            throw NATSError(.invalidSubject, reason: "\(what) '\(token.prefix(64))' is empty or holds whitespace")
        }
    }
}
