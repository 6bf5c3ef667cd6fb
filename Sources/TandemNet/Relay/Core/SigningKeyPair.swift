import CSodium
import Foundation

/// An Ed25519 key pair (libsodium's `crypto_sign_*`): a participant's own, fresh for each
/// session and kept in memory only, or a session's, derived from its secret.
///
/// The secret half never leaves the value: it signs, and `publicKey` is what others check with.
public struct SigningKeyPair: Sendable {
    /// The public key, `RelayWireLimits.publicKeyLength` (32) bytes.
    public let publicKey: [UInt8]
    private let secretKey: [UInt8]

    /// A fresh random key pair.
    public init() {
        RelayAuthenticator.initialise()
        var publicKey = [UInt8](repeating: 0, count: Int(crypto_sign_PUBLICKEYBYTES))
        var secretKey = [UInt8](repeating: 0, count: Int(crypto_sign_SECRETKEYBYTES))
        let result = crypto_sign_keypair(&publicKey, &secretKey)
        precondition(result == 0, "crypto_sign_keypair failed")
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// The key pair that `seed` (32 bytes) determines: the same seed gives the same pair.
    public init(seed: [UInt8]) {
        RelayAuthenticator.initialise()
        precondition(seed.count == Int(crypto_sign_SEEDBYTES), "a signing seed is \(crypto_sign_SEEDBYTES) bytes")
        var publicKey = [UInt8](repeating: 0, count: Int(crypto_sign_PUBLICKEYBYTES))
        var secretKey = [UInt8](repeating: 0, count: Int(crypto_sign_SECRETKEYBYTES))
        let result = crypto_sign_seed_keypair(&publicKey, &secretKey, seed)
        precondition(result == 0, "crypto_sign_seed_keypair failed")
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// Lends the secret half to `body`, which must not keep it (the sealed boxes' conversion
    /// to X25519 needs it).
    func withSecretKey<Result>(_ body: ([UInt8]) -> Result) -> Result { body(secretKey) }

    /// The detached signature (64 bytes) of `message`.
    public func sign(_ message: some ContiguousBytes) -> [UInt8] {
        var signature = [UInt8](repeating: 0, count: Int(crypto_sign_BYTES))
        message.withUnsafeBytes { buffer in
            var length: UInt64 = 0
            let result = crypto_sign_detached(&signature, &length, buffer.baseAddress?.assumingMemoryBound(to: UInt8.self),
                                              UInt64(buffer.count), secretKey)
            precondition(result == 0, "crypto_sign_detached failed")
        }
        return signature
    }

    /// Whether `signature` is `publicKey`'s signature of `message`. Keys and signatures of the
    /// wrong size are simply not valid.
    public static func verify(_ signature: some Collection<UInt8>, of message: some ContiguousBytes,
                              publicKey: some Collection<UInt8>) -> Bool {
        RelayAuthenticator.initialise()
        guard signature.count == Int(crypto_sign_BYTES), publicKey.count == Int(crypto_sign_PUBLICKEYBYTES) else { return false }
        let signatureBytes = Array(signature)
        let keyBytes = Array(publicKey)
        return message.withUnsafeBytes { buffer in
            crypto_sign_verify_detached(signatureBytes, buffer.baseAddress?.assumingMemoryBound(to: UInt8.self),
                                        UInt64(buffer.count), keyBytes) == 0
        }
    }
}
