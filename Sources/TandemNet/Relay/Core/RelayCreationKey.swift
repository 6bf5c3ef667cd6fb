import CSodium
import Foundation
import TandemWire

/// The secret a relay may be started with so that it creates sessions only for those holding it:
/// the relay `tandem host` starts for itself keeps one in its records directory, readable by its
/// user alone, and lets strangers join and resume, never create.
///
/// A creator proves the key in its hello (`RelayHello.creationProof`) with a keyed BLAKE2b hash
/// (`crypto_generichash`) of a domain tag, the session, its identity and its public key. The
/// proof reveals nothing of the key, and it is useless to anyone who copies it off the wire: it
/// names one session and one participant, whose admission still needs a signature of the
/// relay's fresh nonce with that participant's own key.
public enum RelayCreationKey {
    /// The size of a key.
    public static let length = 32

    /// A fresh random key.
    public static func generate() -> [UInt8] { RelayAuthenticator.randomBytes(length) }

    /// The proof that a creator holding `key` puts in its hello to create `sessionID` as the
    /// participant `participantID` with the public key `participantKey`.
    public static func proof(key: [UInt8], sessionID: UUID, participantID: UUID, participantKey: [UInt8]) -> [UInt8] {
        RelayAuthenticator.initialise()
        var message = Array("tandem relay creation v1".utf8)
        withUnsafeBytes(of: sessionID.uuid) { message.append(contentsOf: $0) }
        withUnsafeBytes(of: participantID.uuid) { message.append(contentsOf: $0) }
        message += participantKey
        var hash = [UInt8](repeating: 0, count: RelayWireLimits.creationProofLength)
        let result = crypto_generichash(&hash, hash.count, message, UInt64(message.count), key, key.count)
        precondition(result == 0, "crypto_generichash failed")
        return hash
    }

    /// Whether `hello` carries the proof of `key` for the session and participant it names
    /// (compared in time that does not depend on where it differs).
    public static func isProven(_ hello: RelayHello, key: [UInt8]) -> Bool {
        guard let given = hello.creationProof, key.count == length else { return false }
        let expected = proof(key: key, sessionID: hello.sessionID, participantID: hello.participant.id,
                             participantKey: hello.participant.publicKey)
        return RelayAuthenticator.equal(given, expected)
    }
}
