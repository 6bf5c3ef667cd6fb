import Foundation
import TandemWire

/// An invite's expiry, signed by an operator of the session (its creator first), which the relay
/// checks against the operator keys it keeps for the session, on its own clock: a ticket admits
/// until its expiry, and nobody without an operator's key can make or extend one. The relay
/// learns nothing that lets it join. The ticket also names the lifetime it was made with, so
/// that another operator who hands out the invite of a later epoch gives it the same lifetime
/// from then (`GroupSession.currentInvitation`).
///
///     u64  expiry (Unix seconds)
///     u32  lifetime (seconds; 0 when not said)
///     64   Ed25519 signature of "tandem invite ticket v2", the session, the expiry and the lifetime
public enum InviteTicket {
    private static let domain = Array("tandem invite ticket v2".utf8)

    /// A ticket for `sessionID` admitting until `expiry` (Unix seconds), made for `lifetime`
    /// seconds, signed with `key`.
    public static func make(sessionID: UUID, expiry: UInt64, lifetime: UInt32 = 0, key: SigningKeyPair) -> [UInt8] {
        var writer = ByteWriter(capacity: RelayWireLimits.inviteTicketLength)
        writer.uint64(expiry)
        writer.uint32(lifetime)
        let fields = writer.bytes
        return fields + key.sign(message(sessionID: sessionID, fields: fields))
    }

    /// The expiry (Unix seconds) a ticket names, nil when it is not one.
    public static func expiry(of ticket: [UInt8]) -> UInt64? {
        guard ticket.count == RelayWireLimits.inviteTicketLength else { return nil }
        return ticket.prefix(8).reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// The lifetime (seconds) a ticket was made with, nil when it is not one or names none.
    public static func lifetime(of ticket: [UInt8]) -> UInt32? {
        guard ticket.count == RelayWireLimits.inviteTicketLength else { return nil }
        let lifetime = ticket[8..<12].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return lifetime == 0 ? nil : lifetime
    }

    /// Why `ticket` does not admit to `sessionID` at `now` (Unix seconds) under any of
    /// `publicKeys` (the keys whose tickets the relay takes), nil when it does.
    public static func refusal(of ticket: [UInt8]?, sessionID: UUID, publicKeys: [[UInt8]], now: UInt64) -> String? {
        guard let ticket, let expiry = expiry(of: ticket) else { return "this party's invites expire, and this one carries no ticket: ask for a new invite" }
        let signed = message(sessionID: sessionID, fields: Array(ticket.prefix(12)))
        guard publicKeys.contains(where: { SigningKeyPair.verify(ticket.suffix(64), of: signed, publicKey: $0) }) else {
            return "its ticket is not signed by an operator of the party: ask for a new invite"
        }
        guard now < expiry else {
            let date = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: TimeInterval(expiry)))
            return "it expired at \(date): ask for a new invite"
        }
        return nil
    }

    private static func message(sessionID: UUID, fields: [UInt8]) -> [UInt8] {
        domain + withUnsafeBytes(of: sessionID.uuid) { Array($0) } + fields
    }
}
