import Foundation
import TandemWire

// An operator's removal or rekey, as the relay enforces it without being able to join: the
// creator's connection (proven with the key its identity certifies, registered when it created
// the session) announces the new epoch's verifier and whom it removes; the relay drops that
// participant, refuses it from then on, and admits joiners by the new verifier alone, so that an
// invite of an older epoch stops admitting.
extension RelayCore {
    /// Takes an epoch change from `key`'s connection: ignored unless it comes from the session's
    /// creator and names the next epoch (a repeat, or a participant's who is no creator, changes
    /// nothing). On a cluster the frame goes through the session's log like any other, and every
    /// relay applies it at the same place in the log (`applyFrame`), so that all admit alike; a
    /// snapshot carries the epoch, the earlier verifiers and who was removed.
    mutating func changeEpoch(_ key: ParticipantKey, epoch: UInt8, verifier: [UInt8], removed: UUID?) -> [RelayDirective] {
        guard let session = sessions[key.session], let creator = session.operatorKey,
              let sender = session.participants[key.participant],
              RelayAuthenticator.equal(sender.entry.publicKey, creator),
              session.epoch < .max, epoch == session.epoch + 1,
              verifier.count == RelayWireLimits.publicKeyLength, removed != key.participant else { return [] }
        sessions[key.session]?.formerKeys.append(session.key)
        sessions[key.session]?.key = verifier
        sessions[key.session]?.epoch = epoch
        guard let removed else { return [] }
        sessions[key.session]?.removed.insert(removed)
        let removedKey = ParticipantKey(session: key.session, participant: removed)
        // What a cluster holds of it goes as a departure's would (`applyClusterEntry`, `.departed`).
        if cluster != nil {
            cluster?.backlog[removedKey] = nil
            cluster?.homes[removedKey] = nil
            cluster?.stranded.remove(removedKey)
            cluster?.departing.remove(removedKey)
            cluster?.submitted[removedKey] = nil
            cluster?.cursors[removedKey] = nil
        }
        guard let connection = sessions[key.session]?.participants[removed]?.connection else { return remove(removedKey) }
        connections[connection]?.phase = .closing
        return [.send(connection, .error(RelayFault(.removed, "an operator removed this participant from the session")))]
            + remove(removedKey)
    }
}
