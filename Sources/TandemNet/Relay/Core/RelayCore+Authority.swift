import Foundation
import TandemWire

// Who may rekey and remove at the relay, which reads no sealed role record: the relay keeps the
// public keys of the session's operators (its creator's, registered when it created the
// session, then those the operators' signed statements grant), and takes an operator's
// statement (`RelayAuthority`) on its own signature, whichever connection carried it. The
// participants' own rules (`RoleBook`) stay the word on the roles; the relay mirrors what it can
// check, so that any operator can rekey or remove someone here, also once the creator has left.
extension RelayCore {
    /// The most operator keys the relay keeps for a session (the role book's own cap).
    static let maximumOperatorKeys = 64
    /// The most keys whose invite tickets a session's relay takes: operators present and past.
    static let maximumTicketKeys = 256
    /// The most statement counters the relay keeps for a session.
    static let maximumAuthorityCounters = 1024
    /// The most earlier epochs' verifiers the relay keeps for a session, the newest: a
    /// participant admitted more epochs ago than that resumes no more (it rejoins).
    static let maximumFormerKeys = 1024

    /// Takes an operator's statement from `key`'s connection, or ignores it with the reason
    /// (`authorityRefusal`): a repeat, a statement for another session, or one whose signer is no
    /// operator here changes nothing. One whose signature does not verify, which no honest client
    /// sends, is a protocol violation: its sender is dropped, so that forged statements cost the
    /// relay one signature check per admission. On a cluster the frame goes through the session's
    /// log like any other and every relay applies it at the same place in the log
    /// (`applyFrame`), so that all agree; a snapshot carries the keys.
    mutating func takeAuthority(_ statement: RelayAuthority, from key: ParticipantKey, on connection: RelayConnectionID,
                                at now: Int64) -> [RelayDirective] {
        // The look at the session ends before anything changes: a copy of it alive while the
        // outboxes grow (a removal's departure) would make each append copy a whole outbox.
        let refusal: String?
        do {
            guard let session = sessions[key.session] else { return [] }
            refusal = authorityRefusal(statement, in: session)
        }
        switch refusal {
        case nil:
            break
        case Self.unsigned?:
            return drop(connection, fault: RelayFault(.protocolViolation, "an operator's statement whose signature does not verify"), at: now)
        case _?:
            return []
        }
        return apply(statement, in: key.session)
    }

    /// A role record from `key`'s connection with its maker's statement (`authoredProposal`):
    /// the statement is checked as an `authority` frame's is, at the record's order (the
    /// sender's first order counts for a claim, as it does once the record is ordered); the
    /// record is ordered as a kept one, pinned apart from the history's caps when the relay
    /// takes the statement, and the statement then changes what it changes. A statement whose
    /// signature does not verify drops the sender and orders nothing; any other refusal leaves
    /// the record an ordinary kept one (the participants' role book still decides).
    mutating func orderAuthored(_ body: [UInt8], statement: RelayAuthority, from key: ParticipantKey, on connection: RelayConnectionID,
                                at now: Int64, stamped: (orderedAt: Int64, effectiveAt: Int64)? = nil) -> [RelayDirective] {
        guard let nextOrder = sessions[key.session]?.nextOrder else { return [] }
        if sessions[key.session]?.participants[key.participant]?.firstOrder == nil {
            sessions[key.session]?.participants[key.participant]?.firstOrder = nextOrder
        }
        let refusal: String?
        do {
            guard let session = sessions[key.session] else { return [] }
            refusal = authorityRefusal(statement, in: session)
        }
        if refusal == Self.unsigned {
            return drop(connection, fault: RelayFault(.protocolViolation, "an operator's statement whose signature does not verify"), at: now)
        }
        let ordered = order(body, retention: .kept, pinned: refusal == nil, from: key, on: connection, at: now, stamped: stamped)
        guard refusal == nil else { return ordered }
        return ordered + apply(statement, in: key.session)
    }

    /// What a statement the relay took changes in `sessionID`: its counter, then the change.
    private mutating func apply(_ statement: RelayAuthority, in sessionID: UUID) -> [RelayDirective] {
        sessions[sessionID]?.authorityCounters[statement.signer] = statement.counter
        // Bounded: past the cap, the counters of keys that are no operator's any more go (such a
        // key's statements are refused for its role before its counter matters).
        if let counters = sessions[sessionID]?.authorityCounters, counters.count > Self.maximumAuthorityCounters,
           let operators = sessions[sessionID]?.operatorIDs {
            sessions[sessionID]?.authorityCounters = counters.filter { operators.contains(RelayAuthenticator.participantID(for: $0.key)) }
            sessions[sessionID]?.authorityCounters[statement.signer] = statement.counter
        }
        switch statement.change {
        case let .grant(subject):
            sessions[sessionID]?.operatorKeys.append(subject)
            vouch(for: subject, in: sessionID)
            return []
        case let .revoke(subject):
            forgetOperator(subject, in: sessionID)
            return []
        case .claim:
            // The operators who left keep vouching for the invites they handed out, and one of
            // them that was there after all takes the role back (`reinstate`).
            let displaced = sessions[sessionID]?.operatorKeys ?? []
            sessions[sessionID]?.displacedKeys = displaced
            sessions[sessionID]?.claimantKey = statement.signer
            sessions[sessionID]?.operatorKeys = [statement.signer]
            vouch(for: statement.signer, in: sessionID)
            return []
        case .reinstate:
            // The claimant's claimed role ends, as in the role book; its tickets stop admitting
            // with it, as a revoked operator's do.
            if let claimant = sessions[sessionID]?.claimantKey { forgetOperator(claimant, in: sessionID) }
            sessions[sessionID]?.operatorKeys.append(statement.signer)
            vouch(for: statement.signer, in: sessionID)
            sessions[sessionID]?.displacedKeys = []
            sessions[sessionID]?.claimantKey = nil
            return []
        case .epochHistory:
            return []
        case let .epoch(epoch, verifier, removed):
            return changeEpoch(sessionID, epoch: epoch, verifier: verifier, removed: removed)
        case let .ending(operatorsOnly):
            sessions[sessionID]?.endingByOperators = operatorsOnly
            return []
        }
    }

    /// Why `participant` may not end `session`, nil when it may: an operator's statement made
    /// ending the operators' alone, and the relay does not hold `participant` as one. A
    /// well-behaved client refuses such an `end` before sending it (`SessionRoles.mayEnd`).
    func endingRefusal(by participant: UUID, in session: RelaySessionState) -> RelayFault? {
        guard session.endingByOperators, !session.operatorIDs.contains(participant) else { return nil }
        return RelayFault(.notPermitted, "only an operator may end this session")
    }

    /// `publicKey`'s tickets admit from now on, while there is room.
    private mutating func vouch(for publicKey: [UInt8], in sessionID: UUID) {
        guard let keys = sessions[sessionID]?.ticketKeys, !keys.contains(where: { RelayAuthenticator.equal($0, publicKey) }),
              keys.count < Self.maximumTicketKeys else { return }
        sessions[sessionID]?.ticketKeys.append(publicKey)
    }

    /// Why `statement` changes nothing in `session`, nil when the relay takes it. The cheap rules
    /// come first, the signature last, so that a stranger's statements cost no signature check.
    ///
    /// - Every statement: for this session, its counter above the last taken from its signer,
    ///   its signature by the signer's key.
    /// - `grant`: the signer is an operator, the subject is not, fewer than
    ///   `maximumOperatorKeys` are.
    /// - `revoke`: the signer and the subject are operators, and the subject is not the last.
    /// - `claim`: the signer is a participant present, no operator is, and the signer has been
    ///   present longest (its first ordered record came first, then the lowest identity): the
    ///   rule every participant applies to choose who claims (`SessionMachine.onRolesReview`).
    /// - `epoch`: the signer is an operator, the epoch is the next one, the signer does not
    ///   remove itself.
    /// - `ending`, `epochHistory`: the signer is an operator.
    /// - `reinstate`: the signer is no operator and the claim the relay took last displaced it
    ///   (the role book's rule: a participant named departed that was there after all).
    func authorityRefusal(_ statement: RelayAuthority, in session: RelaySessionState) -> String? {
        guard statement.session == session.id else { return "a statement for another session" }
        guard statement.counter > session.authorityCounters[statement.signer] ?? 0 else { return "a statement seen before" }
        guard statement.signer.count == RelayWireLimits.publicKeyLength else { return "a key of the wrong size" }
        let signer = RelayAuthenticator.participantID(for: statement.signer)
        let isOperator = session.operatorIDs.contains(signer)
        switch statement.change {
        case let .grant(subject):
            guard isOperator else { return "its signer is no operator" }
            guard subject.count == RelayWireLimits.publicKeyLength else { return "a key of the wrong size" }
            if session.operatorIDs.contains(RelayAuthenticator.participantID(for: subject)) { return "already an operator" }
            if session.operatorKeys.count >= Self.maximumOperatorKeys { return "the session holds \(Self.maximumOperatorKeys) operators" }
        case let .revoke(subject):
            guard isOperator else { return "its signer is no operator" }
            guard session.operatorIDs.contains(RelayAuthenticator.participantID(for: subject)) else { return "not an operator" }
            if session.operatorKeys.count == 1 { return "the last operator keeps the role" }
        case .claim:
            if isOperator { return "already an operator" }
            guard let claimant = session.participants[signer], RelayAuthenticator.equal(claimant.entry.publicKey, statement.signer) else {
                return "its signer is not present"
            }
            if session.operatorIDs.contains(where: { session.participants[$0] != nil }) { return "an operator is present" }
            let heir = session.participants.values.min { Self.isLongerPresent($0, than: $1) }
            guard heir?.entry.id == claimant.entry.id else { return "another participant has been present longer" }
        case let .epoch(epoch, verifier, removed):
            guard isOperator else { return "its signer is no operator" }
            guard session.epoch < .max, epoch == session.epoch + 1 else { return "not the next epoch" }
            guard verifier.count == RelayWireLimits.publicKeyLength else { return "a verifier of the wrong size" }
            if removed == signer { return "an operator cannot remove itself" }
        case .ending, .epochHistory:
            guard isOperator else { return "its signer is no operator" }
        case .reinstate:
            if isOperator { return "already an operator" }
            guard session.displacedKeys.contains(where: { RelayAuthenticator.equal($0, statement.signer) }) else {
                return "no claim the relay took displaced its signer"
            }
        }
        guard statement.isSignedBySigner else { return Self.unsigned }
        return nil
    }

    /// The refusal of a statement whose signature does not verify.
    static let unsigned = "its signature does not verify"

    /// Whether `lhs` has been present longer than `rhs`: its first ordered record came earlier
    /// (one that ordered nothing comes last), then the lower identity, as participants compare
    /// (they compare `uuidString`s, whose order is the bytes' order, which is compared here
    /// without making strings).
    static func isLongerPresent(_ lhs: RelaySessionState.Participant, than rhs: RelaySessionState.Participant) -> Bool {
        let (left, right) = (lhs.firstOrder ?? .max, rhs.firstOrder ?? .max)
        if left != right { return left < right }
        return withUnsafeBytes(of: lhs.entry.id.uuid) { first in
            withUnsafeBytes(of: rhs.entry.id.uuid) { second in first.lexicographicallyPrecedes(second) }
        }
    }

    /// `publicKey` is an operator's no more, nor vouches for invites.
    private mutating func forgetOperator(_ publicKey: [UInt8], in sessionID: UUID) {
        sessions[sessionID]?.operatorKeys.removeAll { RelayAuthenticator.equal($0, publicKey) }
        sessions[sessionID]?.ticketKeys.removeAll { RelayAuthenticator.equal($0, publicKey) }
    }

    /// An operator's removal or rekey: the relay admits joiners by the new verifier alone from
    /// then on, so that an invite of an older epoch stops admitting, and drops `removed` (who
    /// loses any role it held here) and refuses it.
    private mutating func changeEpoch(_ sessionID: UUID, epoch: UInt16, verifier: [UInt8], removed: UUID?) -> [RelayDirective] {
        guard let former = sessions[sessionID]?.key else { return [] }
        sessions[sessionID]?.formerKeys.append(former)
        if let count = sessions[sessionID]?.formerKeys.count, count > Self.maximumFormerKeys {
            sessions[sessionID]?.formerKeys.removeFirst(count - Self.maximumFormerKeys)
        }
        sessions[sessionID]?.key = verifier
        sessions[sessionID]?.epoch = epoch
        guard let removed else { return [] }
        sessions[sessionID]?.removed.insert(removed)
        let removedKey = sessions[sessionID]?.participants[removed]?.entry.publicKey
            ?? sessions[sessionID]?.former.first { $0.id == removed }?.publicKey
        if let removedKey {
            forgetOperator(removedKey, in: sessionID)
            sessions[sessionID]?.displacedKeys.removeAll { RelayAuthenticator.equal($0, removedKey) }
        }
        let participantKey = ParticipantKey(session: sessionID, participant: removed)
        // What a cluster holds of it goes as a departure's would (`applyClusterEntry`, `.departed`).
        if cluster != nil {
            cluster?.backlog[participantKey] = nil
            cluster?.homes[participantKey] = nil
            cluster?.stranded.remove(participantKey)
            cluster?.departing.remove(participantKey)
            cluster?.submitted[participantKey] = nil
            cluster?.cursors[participantKey] = nil
        }
        guard let connection = sessions[sessionID]?.participants[removed]?.connection else { return remove(participantKey) }
        connections[connection]?.phase = .closing
        return [.send(connection, .error(RelayFault(.removed, "an operator removed this participant from the session")))]
            + remove(participantKey)
    }
}
