import Foundation
import TandemNet

/// A move of the whole group to a new epoch: a fresh secret, sealed to each remaining
/// participant's own key, so that a participant removed (or anyone holding only an older
/// invite) never receives it.
///
/// Each box is the new secret sealed to a participant's Ed25519 key converted to X25519
/// (`SigningKeyPair.sealBox(_:to:)`); each participant opens its own and checks the secret
/// against `verifier`, so that all who open one hold the same secret. The verifier is also
/// what the relay admits joiners by once the epoch begins.
public struct EpochChange: Sendable, Hashable {
    /// The most participants a change hands the secret to (a record's size bounds it).
    public static let maximumBoxes = 2048
    /// The size of one box: the secret and a sealed box's overhead.
    static let boxLength = 32 + SigningKeyPair.sealedBoxOverhead

    /// The new epoch.
    public let epoch: UInt16
    /// The public half of the new secret's signing key (`SessionSecret.verifier`).
    public let verifier: [UInt8]
    /// The new secret, sealed to each remaining participant's key, by identity.
    public let boxes: [UUID: [UInt8]]

    /// A change as it was decoded from a record.
    init(epoch: UInt16, verifier: [UInt8], boxes: [UUID: [UInt8]]) {
        self.epoch = epoch
        self.verifier = verifier
        self.boxes = boxes
    }

    /// A change to `epoch` under `secret`, sealed to each of `keys` (participants' public keys by
    /// identity); nil when there are more than `maximumBoxes` or a key cannot take a box.
    init?(epoch: UInt16, secret: SessionSecret, for keys: [UUID: [UInt8]]) {
        guard keys.count <= Self.maximumBoxes else { return nil }
        var boxes: [UUID: [UInt8]] = [:]
        for (id, key) in keys {
            guard let box = SigningKeyPair.sealBox(secret.bytes, to: key) else { return nil }
            boxes[id] = box
        }
        self.init(epoch: epoch, verifier: secret.verifier, boxes: boxes)
    }

    /// The new secret from the box sealed to `identity`, checked against the verifier; nil when
    /// there is no box for `id` or it does not open to the secret the verifier names.
    func secret(for id: UUID, identity: SigningKeyPair) -> SessionSecret? {
        guard let box = boxes[id], let bytes = identity.openBox(box), let secret = SessionSecret(bytes: bytes),
              secret.verifier == verifier else { return nil }
        return secret
    }
}
