import Foundation

/// An operator's statement to the relay, signed with the operator's own Ed25519 key: the relay
/// reads no sealed role record, so each change of who may rekey or remove, and each rekey or
/// removal, reaches it as one of these, which it checks against the operator keys it keeps for
/// the session (`RelayCore+Authority.swift`). The relay trusts the signature, never the
/// connection a statement came on.
///
///     u8   change (1 grant, 2 revoke, 3 claim, 4 epoch, 5 ending, 6 reinstate, 7 epoch history)
///     16   session
///     32   signer's public key
///     u64  counter, per signer, strictly increasing (a statement seen again changes nothing)
///     …    the change's fields: grant and revoke the subject's public key (32); epoch the new
///          epoch (u16), its verifier (32), and whom it removes (u8 flag, then 16); ending
///          whether operators alone may end the session (u8 flag); reinstate and epoch
///          history none
///     64   Ed25519 signature of "tandem relay authority v1" and every byte above
public struct RelayAuthority: Sendable, Hashable {
    /// What a statement changes at the relay.
    public enum Change: Sendable, Hashable {
        /// The holder of `publicKey` becomes an operator.
        case grant(publicKey: [UInt8])
        /// The holder of `publicKey` is an operator no more.
        case revoke(publicKey: [UInt8])
        /// The signer takes the role: no operator is present and it has been present longest.
        case claim
        /// The session moves to `epoch`, whose secret's verifier is `verifier`, removing
        /// `removed` (nil for a rekey).
        case epoch(UInt16, verifier: [UInt8], removed: UUID?)
        /// Who may end the session from now on: operators alone, or everyone (the session
        /// policy's `ending`, which the relay enforces on an `end` frame).
        case ending(operatorsOnly: Bool)
        /// The signer takes back the operator role that a claim took from it (it was named
        /// departed, though it was there): the claimant's claimed role ends.
        case reinstate
        /// The signer, an operator, hands late joiners the session's older keys (a role
        /// record's `epoch history`): nothing changes at the relay but that it keeps the record
        /// apart from the history's caps.
        case epochHistory
    }

    /// The most bytes a statement takes written (`write(into:)`): a removal's.
    package static let maximumLength = 1 + 16 + RelayWireLimits.publicKeyLength + 8 + 2 + RelayWireLimits.publicKeyLength + 1 + 16
        + RelayWireLimits.signatureLength

    /// The domain every statement's signature is made over first.
    public static let domain = Array("tandem relay authority v1".utf8)

    /// The session the statement is for.
    public var session: UUID
    /// The signer's public key.
    public var signer: [UInt8]
    /// The signer's counter: the relay takes a statement only above the last it took from it.
    public var counter: UInt64
    /// What it changes.
    public var change: Change
    /// The Ed25519 signature of `signedBytes` with the signer's key.
    public var signature: [UInt8]

    /// A statement; `signature` is made over `signedBytes` (see `RelayAuthority+Signing` in the
    /// net layer).
    public init(session: UUID, signer: [UInt8], counter: UInt64, change: Change, signature: [UInt8]) {
        self.session = session
        self.signer = signer
        self.counter = counter
        self.change = change
        self.signature = signature
    }

    /// The bytes the signature covers: the domain, then every field but the signature.
    public var signedBytes: [UInt8] {
        var writer = ByteWriter(capacity: 160)
        writer.fixed(Self.domain)
        writeFields(into: &writer)
        return writer.bytes
    }

    /// Writes every field but the signature.
    func writeFields(into writer: inout ByteWriter) {
        switch change {
        case .grant: writer.uint8(1)
        case .revoke: writer.uint8(2)
        case .claim: writer.uint8(3)
        case .epoch: writer.uint8(4)
        case .ending: writer.uint8(5)
        case .reinstate: writer.uint8(6)
        case .epochHistory: writer.uint8(7)
        }
        writer.uuid(session)
        writer.fixed(signer, count: RelayWireLimits.publicKeyLength)
        writer.uint64(counter)
        switch change {
        case let .grant(key), let .revoke(key):
            writer.fixed(key, count: RelayWireLimits.publicKeyLength)
        case .claim, .reinstate, .epochHistory:
            break
        case let .epoch(epoch, verifier, removed):
            writer.uint16(epoch)
            writer.fixed(verifier, count: RelayWireLimits.publicKeyLength)
            writer.bool(removed != nil)
            if let removed { writer.uuid(removed) }
        case let .ending(operatorsOnly):
            writer.bool(operatorsOnly)
        }
    }

    /// Writes the statement, signature last.
    package func write(into writer: inout ByteWriter) {
        writeFields(into: &writer)
        writer.fixed(signature, count: RelayWireLimits.signatureLength)
    }

    /// Reads a statement written by `write(into:)`.
    package static func read(from reader: inout ByteReader) throws(WireError) -> RelayAuthority {
        let kind = try reader.uint8()
        let session = try reader.uuid()
        let signer = try reader.fixed(RelayWireLimits.publicKeyLength)
        let counter = try reader.uint64()
        let change: Change
        switch kind {
        case 1: change = .grant(publicKey: try reader.fixed(RelayWireLimits.publicKeyLength))
        case 2: change = .revoke(publicKey: try reader.fixed(RelayWireLimits.publicKeyLength))
        case 3: change = .claim
        case 4:
            let epoch = try reader.uint16()
            let verifier = try reader.fixed(RelayWireLimits.publicKeyLength)
            change = .epoch(epoch, verifier: verifier, removed: try reader.bool() ? try reader.uuid() : nil)
        case 5: change = .ending(operatorsOnly: try reader.bool())
        case 6: change = .reinstate
        case 7: change = .epochHistory
        default:
            throw WireError(.malformed("authority change \(kind)"), context: reader.context)
        }
        return RelayAuthority(session: session, signer: signer, counter: counter, change: change,
                              signature: try reader.fixed(RelayWireLimits.signatureLength))
    }
}
