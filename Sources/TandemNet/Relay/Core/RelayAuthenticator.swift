import CSodium
import Foundation

/// The relay's challenge and response: HMAC-SHA256 (libsodium's `crypto_auth_hmacsha256`) under
/// the session's authentication key, over the relay's nonce, the session and the participant,
/// so that a proof is good for one connection's challenge only and the key never travels.
public enum RelayAuthenticator {
    private static let ready: Bool = sodium_init() >= 0

    /// The proof for `nonce`, `sessionID` and `participantID` under `key` (32 bytes).
    public static func proof(key: [UInt8], nonce: [UInt8], sessionID: UUID, participantID: UUID) -> [UInt8] {
        precondition(ready, "libsodium failed to initialise")
        precondition(key.count == Int(crypto_auth_hmacsha256_KEYBYTES), "an authentication key is 32 bytes")
        var message = nonce
        withUnsafeBytes(of: sessionID.uuid) { message.append(contentsOf: $0) }
        withUnsafeBytes(of: participantID.uuid) { message.append(contentsOf: $0) }
        var mac = [UInt8](repeating: 0, count: Int(crypto_auth_hmacsha256_BYTES))
        _ = crypto_auth_hmacsha256(&mac, message, UInt64(message.count), key)
        return mac
    }

    /// Whether two secrets are equal, in time that does not depend on where they differ.
    public static func equal(_ first: [UInt8], _ second: [UInt8]) -> Bool {
        guard first.count == second.count, !first.isEmpty else { return false }
        return sodium_memcmp(first, second, first.count) == 0
    }

    /// `count` bytes from libsodium's random source: nonces and tokens.
    public static func randomBytes(_ count: Int) -> [UInt8] {
        precondition(ready, "libsodium failed to initialise")
        var bytes = [UInt8](repeating: 0, count: count)
        randombytes_buf(&bytes, count)
        return bytes
    }
}
