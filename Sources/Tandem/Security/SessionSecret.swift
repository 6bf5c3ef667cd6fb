import CSodium
import Foundation
import TandemNet

/// A session's secret: 32 random bytes carried in the invite, from which two unrelated keys are
/// derived. The relay learns only the public half of the session's signing key (the verifier,
/// to admit those who can sign with it); the signing key itself and the sealing key, which
/// encrypts every body end to end, never leave the participants.
public struct SessionSecret: Sendable, Hashable, CustomStringConvertible {
    /// The secret's bytes.
    public let bytes: [UInt8]

    /// A fresh random secret.
    public init() {
        SodiumLibrary.initialise()
        var bytes = [UInt8](repeating: 0, count: 32)
        randombytes_buf(&bytes, bytes.count)
        self.bytes = bytes
    }

    /// The secret in `bytes` (32 of them).
    public init?(bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        self.bytes = bytes
    }

    /// The secret from its text form in an invite (base64url, no padding).
    public init?(text: String) {
        guard let bytes = Base64URL.decode(text) else { return nil }
        self.init(bytes: bytes)
    }

    /// Never the secret itself: a secret interpolated into a message or a log by mistake
    /// shows as `SessionSecret(…)`. Use `text` where the secret is meant to be written.
    public var description: String { "SessionSecret(…)" }

    /// The text form for an invite (base64url, no padding).
    public var text: String { Base64URL.encode(bytes) }

    /// The session's Ed25519 key, seeded by `crypto_kdf_derive_from_key`: joiners sign the
    /// relay's challenge with it, and the relay checks with its public half, the verifier,
    /// which the creator registers. Nothing the relay holds lets it (or an observer) join.
    public var signingKey: SigningKeyPair { SigningKeyPair(seed: derive(subkey: 1, context: "tdm-auth")) }

    /// The verifier: the public half of `signingKey`, all the relay learns of the secret.
    public var verifier: [UInt8] { signingKey.publicKey }

    /// The key that seals bodies end to end (the relay never sees it).
    var sealingKey: [UInt8] { derive(subkey: 2, context: "tdm-seal") }

    private func derive(subkey: UInt64, context: String) -> [UInt8] {
        SodiumLibrary.initialise()
        var key = [UInt8](repeating: 0, count: 32)
        let contextBytes = Array(context.utf8.prefix(8)).map { CChar(bitPattern: $0) }
        precondition(contextBytes.count == Int(crypto_kdf_CONTEXTBYTES))
        let result = crypto_kdf_derive_from_key(&key, key.count, subkey, contextBytes, bytes)
        precondition(result == 0, "crypto_kdf_derive_from_key failed")
        return key
    }
}

/// libsodium's one-time initialisation.
enum SodiumLibrary {
    private static let initialised: Bool = sodium_init() >= 0

    static func initialise() {
        precondition(initialised, "libsodium could not be initialised")
    }
}

/// Base64 with the URL-safe alphabet and no padding (RFC 4648, section 5).
enum Base64URL {
    static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func decode(_ text: String) -> [UInt8]? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        guard !base64.contains("=") else { return nil }
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64).map { [UInt8]($0) }
    }
}
