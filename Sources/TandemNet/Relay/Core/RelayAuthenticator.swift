import CSodium
import Foundation
import TandemWire

/// The relay's admission checks, with libsodium: self-certifying participant identities, and
/// the challenge that joiners answer with two Ed25519 signatures.
///
/// A joiner signs the relay's fresh nonce, bound to the session, its identity and its public
/// key, once with the session's key (derived from the invite's secret; the relay holds only its
/// public half, the verifier, which the creator registered) and once with its own key. So the
/// relay can check joiners without being able to join, an observer of any connection learns
/// nothing that lets them join, and only the holder of a participant's own key can resume it.
public enum RelayAuthenticator {
    private static let ready: Bool = sodium_init() >= 0

    /// libsodium's one-time initialisation.
    static func initialise() {
        precondition(ready, "libsodium failed to initialise")
    }

    /// Who signs a challenge.
    public enum Signer: UInt8, Sendable {
        /// The session's key, derived from the invite's secret.
        case session = 1
        /// The participant's own key.
        case participant = 2
    }

    /// What a joiner signs for the challenge `nonce`: a domain tag, the signer's role, the
    /// nonce, the session, the participant's identity and its public key.
    public static func challengeMessage(_ signer: Signer, nonce: [UInt8], sessionID: UUID, participantID: UUID,
                                        participantKey: [UInt8]) -> [UInt8] {
        var message = Array("tandem relay challenge v3".utf8)
        message.append(signer.rawValue)
        message += nonce
        withUnsafeBytes(of: sessionID.uuid) { message.append(contentsOf: $0) }
        withUnsafeBytes(of: participantID.uuid) { message.append(contentsOf: $0) }
        message += participantKey
        return message
    }

    /// The frame that answers the relay's challenge `nonce` for a participant with key pair
    /// `identity` joining `sessionID` with the session's key pair: a proof when the session
    /// exists, else a claim registering the session key's public half as the verifier. The
    /// participant's identity is the one its key certifies unless `participant` names another
    /// (which the relay refuses: tests of that refusal name one).
    public static func answer(nonce: [UInt8], sessionExists: Bool, sessionID: UUID, sessionKey: SigningKeyPair,
                              identity: SigningKeyPair, participant: UUID? = nil) -> RelayFrame {
        let participantID = participant ?? participantID(for: identity.publicKey)
        func message(_ signer: Signer) -> [UInt8] {
            challengeMessage(signer, nonce: nonce, sessionID: sessionID, participantID: participantID, participantKey: identity.publicKey)
        }
        let sessionSignature = sessionKey.sign(message(.session))
        let participantSignature = identity.sign(message(.participant))
        return sessionExists
            ? .proof(sessionSignature: sessionSignature, participantSignature: participantSignature)
            : .claim(verifier: sessionKey.publicKey, sessionSignature: sessionSignature, participantSignature: participantSignature)
    }

    /// The identity that a participant with `publicKey` has: the first 16 bytes of its BLAKE2b
    /// hash (`crypto_generichash`, with a domain tag), with the version bits of an RFC 9562
    /// version 8 (custom) UUID. Nobody can choose a key for someone else's identity.
    public static func participantID(for publicKey: [UInt8]) -> UUID {
        initialise()
        let input = Array("tandem participant v3".utf8) + publicKey
        var hash = [UInt8](repeating: 0, count: 16)
        let result = crypto_generichash(&hash, hash.count, input, UInt64(input.count), nil, 0)
        precondition(result == 0, "crypto_generichash failed")
        hash[6] = (hash[6] & 0x0F) | 0x80
        hash[8] = (hash[8] & 0x3F) | 0x80
        return UUID(uuid: (hash[0], hash[1], hash[2], hash[3], hash[4], hash[5], hash[6], hash[7],
                           hash[8], hash[9], hash[10], hash[11], hash[12], hash[13], hash[14], hash[15]))
    }

    /// Whether `id` is the identity of `publicKey`.
    public static func isIdentity(_ id: UUID, of publicKey: [UInt8]) -> Bool {
        publicKey.count == Int(crypto_sign_PUBLICKEYBYTES) && participantID(for: publicKey) == id
    }

    /// Whether two secrets are equal, in time that does not depend on where they differ.
    public static func equal(_ first: [UInt8], _ second: [UInt8]) -> Bool {
        guard first.count == second.count, !first.isEmpty else { return false }
        return sodium_memcmp(first, second, first.count) == 0
    }

    /// `count` bytes from libsodium's random source: nonces and tokens.
    public static func randomBytes(_ count: Int) -> [UInt8] {
        initialise()
        var bytes = [UInt8](repeating: 0, count: count)
        randombytes_buf(&bytes, count)
        return bytes
    }
}
