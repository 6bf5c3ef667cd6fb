import CSodium
import Foundation

// Sealed boxes to a participant's own key: a secret meant for one participant alone (a session's
// new epoch secret, when someone is removed) travels sealed to its Ed25519 key, converted to
// X25519 (libsodium's `crypto_sign_ed25519_pk_to_curve25519`, `crypto_box_seal`), so that
// only the holder of the matching secret key opens it and nobody learns who sealed it.
extension SigningKeyPair {
    /// Bytes a sealed box adds to its message (an ephemeral public key and a tag).
    public static let sealedBoxOverhead = Int(crypto_box_sealbytes())

    /// `message` sealed to the holder of the Ed25519 `publicKey`; nil when the key is not a
    /// valid Ed25519 point (it cannot be converted).
    public static func sealBox(_ message: [UInt8], to publicKey: [UInt8]) -> [UInt8]? {
        RelayAuthenticator.initialise()
        guard publicKey.count == Int(crypto_sign_PUBLICKEYBYTES) else { return nil }
        var curveKey = [UInt8](repeating: 0, count: Int(crypto_box_PUBLICKEYBYTES))
        guard crypto_sign_ed25519_pk_to_curve25519(&curveKey, publicKey) == 0 else { return nil }
        var box = [UInt8](repeating: 0, count: message.count + sealedBoxOverhead)
        guard crypto_box_seal(&box, message, UInt64(message.count), curveKey) == 0 else { return nil }
        return box
    }

    /// The message in `box`, sealed to this key pair's public key; nil when it was sealed to
    /// another key or altered.
    public func openBox(_ box: [UInt8]) -> [UInt8]? {
        guard box.count >= Self.sealedBoxOverhead else { return nil }
        var curvePublic = [UInt8](repeating: 0, count: Int(crypto_box_PUBLICKEYBYTES))
        var curveSecret = [UInt8](repeating: 0, count: Int(crypto_box_SECRETKEYBYTES))
        defer { sodium_memzero(&curveSecret, curveSecret.count) }
        guard crypto_sign_ed25519_pk_to_curve25519(&curvePublic, publicKey) == 0,
              withSecretKey({ crypto_sign_ed25519_sk_to_curve25519(&curveSecret, $0) }) == 0 else { return nil }
        var message = [UInt8](repeating: 0, count: box.count - Self.sealedBoxOverhead)
        guard crypto_box_seal_open(&message, box, UInt64(box.count), curvePublic, curveSecret) == 0 else { return nil }
        return message
    }
}
