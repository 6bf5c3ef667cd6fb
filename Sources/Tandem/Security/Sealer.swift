import CSodium
import Foundation

/// Seals and opens bodies with XChaCha20-Poly1305 under one epoch's sealing key, bound to the
/// session's identity and to the epoch, so that the relay (or anyone without that epoch's
/// secret) can neither read nor alter what participants exchange.
///
/// A sealed body is the epoch (two bytes, big-endian, in clear, so that a receiver picks the key
/// to open it with), a random nonce, then the ciphertext and its tag. The epoch is also part of the
/// authenticated data: a body whose epoch byte was changed does not open under any key.
struct Sealer: Sendable {
    private let key: [UInt8]
    private let binding: [UInt8]
    /// The epoch whose key this is: 0 for the invite's first secret, then one more at each
    /// removal or rekey.
    let epoch: UInt16

    /// The bytes of the epoch in front of a sealed body.
    static let epochLength = 2
    /// Bytes a sealed body adds: the epoch, the nonce and the authentication tag.
    static let overhead = epochLength + Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES) + Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)

    init(secret: SessionSecret, sessionID: UUID, epoch: UInt16 = 0) {
        SodiumLibrary.initialise()
        key = secret.sealingKey
        self.epoch = epoch
        binding = withUnsafeBytes(of: sessionID.uuid) { Array($0) } + Self.epochBytes(epoch)
    }

    /// `epoch` as a sealed body writes it, big-endian.
    private static func epochBytes(_ epoch: UInt16) -> [UInt8] {
        [UInt8(truncatingIfNeeded: epoch >> 8), UInt8(truncatingIfNeeded: epoch)]
    }

    /// The epoch a sealed body names, nil when it is too short to be one.
    static func epoch(of sealed: [UInt8]) -> UInt16? {
        sealed.count >= overhead ? UInt16(sealed[0]) << 8 | UInt16(sealed[1]) : nil
    }

    /// `plaintext`, sealed: the epoch, a random nonce, then the ciphertext and its tag.
    func seal(_ plaintext: [UInt8]) -> [UInt8] {
        let nonceLength = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
        var output = [UInt8](repeating: 0, count: plaintext.count + Sealer.overhead)
        (output[0], output[1]) = (UInt8(truncatingIfNeeded: epoch >> 8), UInt8(truncatingIfNeeded: epoch))
        output.withUnsafeMutableBufferPointer { buffer in
            let nonce = buffer.baseAddress! + Sealer.epochLength
            randombytes_buf(nonce, nonceLength)
            var written: UInt64 = 0
            let result = crypto_aead_xchacha20poly1305_ietf_encrypt(
                nonce + nonceLength, &written,
                plaintext, UInt64(plaintext.count),
                binding, UInt64(binding.count),
                nil, nonce, key
            )
            precondition(result == 0 && Int(written) == plaintext.count + Sealer.overhead - Sealer.epochLength - nonceLength)
        }
        return output
    }

    /// The plaintext of a sealed body, or nil if it was not sealed with this epoch's key for
    /// this session (or was altered).
    func open(_ sealed: [UInt8]) -> [UInt8]? {
        let nonceLength = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
        guard sealed.count >= Sealer.overhead, Sealer.epoch(of: sealed) == epoch else { return nil }
        var plaintext = [UInt8](repeating: 0, count: sealed.count - Sealer.overhead)
        var written: UInt64 = 0
        let result = sealed.withUnsafeBufferPointer { buffer in
            let nonce = buffer.baseAddress! + Sealer.epochLength
            return crypto_aead_xchacha20poly1305_ietf_decrypt(
                &plaintext, &written, nil,
                nonce + nonceLength, UInt64(sealed.count - Sealer.epochLength - nonceLength),
                binding, UInt64(binding.count),
                nonce, key
            )
        }
        guard result == 0 else { return nil }
        return plaintext
    }
}
