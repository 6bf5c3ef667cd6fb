import Foundation
import TandemNet
import TandemWire

/// What every sealed body carries inside its seal: who signed it, for which session, with which
/// counter, for whom, of which kind, on which path, how long the relay may keep it (for ordered
/// records), and (for attachments) for which attachment, all under the sender's Ed25519
/// signature.
///
/// Layout (big-endian), sealed as a whole with the session's key:
///
///     u8   format (2)
///     u16  kind                    (BodyKind)
///     u8   path                    (BodyPath)
///     u8   retention               0: kept, 1: playback, 2: snapshot (OrderedRetention;
///          u64 reflected order      kept on every path but the ordered one), then the order
///                                   a snapshot reflects, when a snapshot
///     16   session id
///     16   sender id               (self-certifying: derived from the key below)
///     32   sender's public key
///     u64  counter                 (per sender, from 1, never reused in the session)
///     u8   recipients tag          0: everyone, 1: a list
///          u16 count + count × 16  the sorted ids, when a list
///     u8   attachment tag          0: none, 1: an attachment id follows
///          16                      the attachment id, when present
///     u32  payload length + payload
///     64   Ed25519 signature of "tandem body v1" followed by every byte above
///
/// The key travels in the body itself, so that a late joiner verifies records of participants
/// who have since left without trusting the relay for their keys; the identity it certifies is
/// checked against the sender id, so a valid signature is always that identity's. The retention
/// is signed so that a relay cannot relabel a record in the header it reads (a kept record as a
/// droppable one, or a snapshot's reflected order): receivers compare the two.
///
/// Format 2 added the retention (wire version 4); format 1 is refused as unsupported.
struct SignedBody: Sendable, Equatable {
    static let format: UInt8 = 2
    /// The most recipients a list may name (as the relay allows).
    static let maximumRecipients = RelayWireLimits.maximumRecipients
    private static let domain = Array("tandem body v1".utf8)
    /// Bytes a signed body adds to its payload without recipients.
    static let overhead = 1 + 2 + 1 + 1 + 16 + 16 + 32 + 8 + 1 + 1 + 4 + 64

    var kind: BodyKind
    var path: BodyPath
    /// How long the relay may keep it: `.kept` on every path but the ordered one.
    var retention: OrderedRetention = .kept
    var sessionID: UUID
    var sender: UUID
    var senderKey: [UInt8]
    var counter: UInt64
    /// nil for everyone; otherwise sorted.
    var recipients: [UUID]?
    var attachment: UUID?
    var payload: [UInt8]
    var signature: [UInt8] = []

    /// The bytes that are signed (everything but the signature).
    var signedBytes: [UInt8] {
        var writer = ByteWriter(capacity: SignedBody.overhead + payload.count + 16 * (recipients?.count ?? 0))
        writer.uint8(SignedBody.format)
        writer.uint16(kind.rawValue)
        writer.uint8(path.rawValue)
        writer.retention(retention)
        writer.uuid(sessionID)
        writer.uuid(sender)
        writer.fixed(senderKey, count: RelayWireLimits.publicKeyLength)
        writer.uint64(counter)
        if let recipients {
            writer.uint8(1)
            writer.uint16(UInt16(clamping: recipients.count))
            for id in recipients.prefix(Int(UInt16.max)) { writer.uuid(id) }
        } else {
            writer.uint8(0)
        }
        if let attachment {
            writer.uint8(1)
            writer.uuid(attachment)
        } else {
            writer.uint8(0)
        }
        writer.bytes(payload)
        return writer.bytes
    }

    /// The body signed with `key`, as bytes ready to seal.
    func signed(with key: SigningKeyPair) -> [UInt8] {
        let bytes = signedBytes
        return bytes + key.sign(SignedBody.domain + bytes)
    }

    /// The body in `bytes`, or why not: any defect is `.malformed`; the signature is checked
    /// with the key the body carries, and the sender id must be the one that key certifies.
    static func verified(_ bytes: [UInt8]) -> Result<SignedBody, RejectionReason> {
        guard bytes.count >= RelayWireLimits.signatureLength else { return .failure(.malformed) }
        let signedPart = bytes[..<(bytes.count - RelayWireLimits.signatureLength)]
        let signature = Array(bytes[(bytes.count - RelayWireLimits.signatureLength)...])
        var reader = ByteReader(signedPart, context: "signed body")
        let body: SignedBody
        do {
            body = try decodeFields(&reader, signature: signature)
        } catch {
            return .failure(.malformed)
        }
        guard RelayAuthenticator.isIdentity(body.sender, of: body.senderKey) else { return .failure(.forgedIdentity) }
        guard SigningKeyPair.verify(signature, of: domain + signedPart, publicKey: body.senderKey) else {
            return .failure(.badSignature)
        }
        return .success(body)
    }

    private static func decodeFields(_ reader: inout ByteReader, signature: [UInt8]) throws(WireError) -> SignedBody {
        let format = try reader.uint8()
        guard format == SignedBody.format else { throw WireError(.unsupportedVersion(format), context: reader.context) }
        let kind = BodyKind(rawValue: try reader.uint16())
        let pathByte = try reader.uint8()
        guard let path = BodyPath(rawValue: pathByte) else {
            throw WireError(.malformed("path \(pathByte)"), context: reader.context)
        }
        let retention = try reader.retention()
        let sessionID = try reader.uuid()
        let sender = try reader.uuid()
        let senderKey = try reader.fixed(RelayWireLimits.publicKeyLength)
        let counter = try reader.uint64()
        var recipients: [UUID]?
        switch try reader.uint8() {
        case 0: recipients = nil
        case 1:
            let count = Int(try reader.uint16())
            guard count <= maximumRecipients else {
                throw WireError(.oversized(length: count, limit: maximumRecipients), context: reader.context)
            }
            var ids: [UUID] = []
            ids.reserveCapacity(min(count, reader.remaining / 16))
            for _ in 0..<count { ids.append(try reader.uuid()) }
            recipients = ids
        case let tag: throw WireError(.malformed("recipient tag \(tag)"), context: reader.context)
        }
        let attachment: UUID? = try reader.bool() ? try reader.uuid() : nil
        let payload = try reader.bytes(limit: RelayWireLimits.maximumAttachment)
        try reader.finish()
        return SignedBody(kind: kind, path: path, retention: retention, sessionID: sessionID, sender: sender, senderKey: senderKey, counter: counter,
                          recipients: recipients, attachment: attachment, payload: payload, signature: signature)
    }
}
