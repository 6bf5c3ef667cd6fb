import CSodium
import Foundation

/// Seals and opens bodies with XChaCha20-Poly1305 under a session's sealing key, bound to the
/// session's identity, so that the relay (or anyone without the secret) can neither read nor
/// alter what participants exchange.
struct Sealer: Sendable {
    private let key: [UInt8]
    private let binding: [UInt8]

    /// Bytes a sealed body adds: the nonce and the authentication tag.
    static let overhead = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES) + Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)

    init(secret: SessionSecret, sessionID: UUID) {
        SodiumLibrary.initialise()
        key = secret.sealingKey
        binding = withUnsafeBytes(of: sessionID.uuid) { Array($0) }
    }

    /// `plaintext`, sealed: a random nonce followed by the ciphertext and its tag.
    func seal(_ plaintext: [UInt8]) -> [UInt8] {
        let nonceLength = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
        var output = [UInt8](repeating: 0, count: plaintext.count + Sealer.overhead)
        output.withUnsafeMutableBufferPointer { buffer in
            randombytes_buf(buffer.baseAddress!, nonceLength)
            var written: UInt64 = 0
            let result = crypto_aead_xchacha20poly1305_ietf_encrypt(
                buffer.baseAddress! + nonceLength, &written,
                plaintext, UInt64(plaintext.count),
                binding, UInt64(binding.count),
                nil, buffer.baseAddress!, key
            )
            precondition(result == 0 && Int(written) == plaintext.count + Sealer.overhead - nonceLength)
        }
        return output
    }

    /// The plaintext of a sealed body, or nil if it was not sealed with this session's key (or
    /// was altered).
    func open(_ sealed: [UInt8]) -> [UInt8]? {
        let nonceLength = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
        guard sealed.count >= Sealer.overhead else { return nil }
        var plaintext = [UInt8](repeating: 0, count: sealed.count - Sealer.overhead)
        var written: UInt64 = 0
        let result = sealed.withUnsafeBufferPointer { buffer in
            crypto_aead_xchacha20poly1305_ietf_decrypt(
                &plaintext, &written, nil,
                buffer.baseAddress! + nonceLength, UInt64(sealed.count - nonceLength),
                binding, UInt64(binding.count),
                buffer.baseAddress!, key
            )
        }
        guard result == 0 else { return nil }
        return plaintext
    }
}
