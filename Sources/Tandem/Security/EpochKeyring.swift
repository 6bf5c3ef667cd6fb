import Foundation

/// The keys of a session's epochs that one participant holds, and the epoch it seals with.
///
/// A session starts in epoch 0, under the invite's secret. Each removal or rekey moves the
/// group to the next epoch under a fresh secret (`EpochChange`); older keys are kept, so that
/// records sealed before it still open, and a late joiner that holds only the newest secret
/// learns the older ones from the history (`RoleChange.epochHistory`).
struct EpochKeyring: Sendable {
    let sessionID: UUID
    /// Each known epoch's secret.
    private(set) var secrets: [UInt16: SessionSecret]
    /// Each known epoch's sealer.
    private(set) var sealers: [UInt16: Sealer]
    /// The sealer bodies are sealed with.
    private(set) var sealing: Sealer

    init(sessionID: UUID, secret: SessionSecret, epoch: UInt16) {
        self.sessionID = sessionID
        sealing = Sealer(secret: secret, sessionID: sessionID, epoch: epoch)
        secrets = [epoch: secret]
        sealers = [epoch: sealing]
    }

    /// Holds `secret` for `epoch`; a secret already held is kept unless `replacing`.
    mutating func learn(_ secret: SessionSecret, epoch: UInt16, replacing: Bool) {
        guard replacing || secrets[epoch] == nil else { return }
        secrets[epoch] = secret
        let sealer = Sealer(secret: secret, sessionID: sessionID, epoch: epoch)
        sealers[epoch] = sealer
        if sealing.epoch == epoch { sealing = sealer }
    }

    /// Seals with `epoch`'s key when it is known and not older than the one in use.
    mutating func advance(to epoch: UInt16) -> Bool {
        if let sealer = sealers[epoch], epoch > sealing.epoch { sealing = sealer }
        return sealing.epoch == epoch
    }
}
