import Foundation
import TandemWire

extension RelayAuthority {
    /// `change` for `session`, signed with `key` under `counter` (which must grow with each
    /// statement the key signs for the session).
    public static func signed(_ change: Change, session: UUID, counter: UInt64, by key: SigningKeyPair) -> RelayAuthority {
        var statement = RelayAuthority(session: session, signer: key.publicKey, counter: counter, change: change, signature: [])
        statement.signature = key.sign(statement.signedBytes)
        return statement
    }

    /// Whether the signature is the signer's over `signedBytes`: what the relay checks last, and
    /// what a participant checks before it hands on another's statement (the relay drops a
    /// connection that carries one that does not verify).
    public var isSignedBySigner: Bool {
        SigningKeyPair.verify(signature, of: signedBytes, publicKey: signer)
    }
}
