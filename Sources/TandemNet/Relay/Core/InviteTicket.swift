import Foundation
import TandemWire

/// An invite's expiry, signed by the session's creator, which the relay checks against the key it
/// registered when the session was created, on its own clock: a ticket admits until its expiry,
/// and nobody without the creator's key can make or extend one. The relay learns nothing that
/// lets it join.
///
///     u64  expiry (Unix seconds)
///     64   Ed25519 signature of "tandem invite ticket v1", the session and the expiry
public enum InviteTicket {
    private static let domain = Array("tandem invite ticket v1".utf8)

    /// A ticket for `sessionID` admitting until `expiry` (Unix seconds), signed with `key`.
    public static func make(sessionID: UUID, expiry: UInt64, key: SigningKeyPair) -> [UInt8] {
        var writer = ByteWriter(capacity: RelayWireLimits.inviteTicketLength)
        writer.uint64(expiry)
        let expiryBytes = writer.bytes
        return expiryBytes + key.sign(message(sessionID: sessionID, expiry: expiryBytes))
    }

    /// The expiry (Unix seconds) a ticket names, nil when it is not one.
    public static func expiry(of ticket: [UInt8]) -> UInt64? {
        guard ticket.count == RelayWireLimits.inviteTicketLength else { return nil }
        return ticket.prefix(8).reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Why `ticket` does not admit to `sessionID` at `now` (Unix seconds) under the creator's
    /// `publicKey`, nil when it does.
    public static func refusal(of ticket: [UInt8]?, sessionID: UUID, publicKey: [UInt8], now: UInt64) -> String? {
        guard let ticket, let expiry = expiry(of: ticket) else { return "this party's invites expire, and this one carries no ticket: ask for a new invite" }
        guard SigningKeyPair.verify(ticket.suffix(64), of: message(sessionID: sessionID, expiry: Array(ticket.prefix(8))), publicKey: publicKey) else {
            return "its ticket is not the party creator's: ask for a new invite"
        }
        guard now < expiry else {
            let date = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: TimeInterval(expiry)))
            return "it expired at \(date): ask for a new invite"
        }
        return nil
    }

    private static func message(sessionID: UUID, expiry: [UInt8]) -> [UInt8] {
        domain + withUnsafeBytes(of: sessionID.uuid) { Array($0) } + expiry
    }
}
