import Foundation
import TandemClock
import TandemNet
import TandemWire

// The session's roles, as the machine folds them from the ordered stream, and the handover
// when the last operator leaves.
extension SessionMachine {
    /// What to do after the machine reviewed who holds the roles.
    enum RoleReviewDirective: Sendable, Equatable {
        /// Send this role change for ordering.
        case send(RoleChange)
    }

    /// Takes an opened role record (a `.roles` body) in the order: folded into the book, with the
    /// event every participant reports for it, and the roles published when they changed.
    mutating func roleRecord(_ signed: SignedBody, order: UInt64, retention: OrderedRetention) -> [EventDirective] {
        guard retention == .kept else {
            roleBook.pass(order: order)
            return [reject(Rejection(reason: .wrongRetention, sender: signed.sender, path: "roles"))]
        }
        guard let (change, statement) = RoleRecord.decodeWithStatement(signed.payload) else {
            roleBook.pass(order: order)
            return [reject(Rejection(reason: .malformed, sender: signed.sender, path: "roles"))]
        }
        let before = roleBook.current
        guard let event = roleBook.apply(change, by: signed.sender, order: order) else { return [] }
        let out: [EventDirective] = [.roleEvent(event)] + (roleBook.current == before ? [] : [.publishRoles(roleBook.current)])
        guard event.refusal == nil else { return out }
        let effects = accepted(change, by: signed.sender, order: order)
        // One removed or left out of a new key ends here, and tells the relay nothing.
        if isInvalidated { return out + effects }
        return out + handOn(statement, of: change, by: signed.sender) + effects
    }

    /// `change` as the plaintext of this participant's role record, with this participant's
    /// signed statement of it for the relay (nil only for a grant or revocation whose subject's
    /// key it does not know). The record goes to the relay with the statement
    /// (`RelayFrame.authoredProposal`), which the relay takes at the record's order, so that it
    /// learns of the change even when nobody else is present; the statement is inside the
    /// record too, and every participant that accepts the record hands it on (`handOn`), which
    /// the relay refuses by its counter once it took it. The counter grows past every order this
    /// participant has seen and every counter it used before: the relay takes a signer's
    /// statements in increasing counters only, and one sender's records are ordered as they
    /// were sent.
    mutating func recordBytes(for change: RoleChange) -> (bytes: [UInt8], statement: RelayAuthority?) {
        guard let relayChange = relayChange(of: change) else { return (RoleRecord.encode(change), nil) }
        authorityCounter = max(authorityCounter, lastOrder ?? 0) + 1
        let statement = RelayAuthority.signed(relayChange, session: bodies.sessionID, counter: authorityCounter, by: bodies.identity)
        return (RoleRecord.encode(change, statement: statement), statement)
    }

    /// What `change` is at the relay, by the public keys this participant knows.
    func relayChange(of change: RoleChange) -> RelayAuthority.Change? {
        change.relayChange(keys: keys)
    }

    /// The maker's statement of an accepted change, to hand on to the relay: only one that is
    /// for this session, signed by the record's own signer, saying what the record says, and
    /// whose signature verifies (the relay drops a connection that carries a forged one). The
    /// relay takes the first copy it sees (the maker's own, with the record, when it holds the
    /// maker as an operator) and refuses the rest by their counter, before any signature check.
    private func handOn(_ statement: RelayAuthority?, of change: RoleChange, by sender: UUID) -> [EventDirective] {
        guard let statement, statement.session == bodies.sessionID, let key = keys[sender],
              RelayAuthenticator.equal(statement.signer, key), statement.change == relayChange(of: change),
              statement.isSignedBySigner else { return [] }
        return [.announceAuthority(statement)]
    }

    /// What an accepted change does beyond the roles: a removal ends the session for the one
    /// removed and moves everyone else to the new epoch, as a rekey does; an epoch history
    /// hands on older keys.
    private mutating func accepted(_ change: RoleChange, by sender: UUID, order: UInt64) -> [EventDirective] {
        switch change {
        case .kick(let target, let epochChange):
            let name = participant(identifiedBy: sender)?.displayName ?? "an operator"
            if target == localParticipant.id { return invalidate(GroupSessionError(.removed, "removed by \(name)")) }
            var out = enter(epochChange, by: sender)
            // The one removed is out of the activity at once, whatever the relay says of it.
            if active.remove(target) != nil { out.append(.publishActive(activeParticipants)) }
            if away.remove(target) != nil {
                awaySince[target] = nil
                out.append(.publishAway(awayParticipants))
            }
            return out
        case .rekey(let epochChange):
            return enter(epochChange, by: sender)
        case .epochHistory(let secrets):
            for (epoch, secret) in secrets where epoch < roleBook.current.epoch { bodies.learn(secret, epoch: epoch) }
            return []
        default:
            return []
        }
    }

    /// Moves to `change`'s epoch: the secret from this participant's own box (checked against
    /// the verifier), or the one it holds already (a late joiner's, from its invite or the
    /// history), then sealing under it. The participant that made the change hands on the older
    /// keys, sealed under the new one, for late joiners. A participant the change left out ends
    /// its session with the reason: nothing it sends could be read any more.
    private mutating func enter(_ change: EpochChange, by sender: UUID) -> [EventDirective] {
        let me = localParticipant.id
        if let secret = change.secret(for: me, identity: bodies.identity) {
            bodies.learn(secret, epoch: change.epoch, replacing: true)
        } else if change.epoch > bodies.epoch, bodies.secret(of: change.epoch)?.verifier != change.verifier {
            let name = participant(identifiedBy: sender)?.displayName ?? "an operator"
            return invalidate(GroupSessionError(.removed, "\(name) moved the session to a new key that this participant did not receive: ask for the new invite"))
        }
        bodies.advance(to: change.epoch)
        guard sender == me else { return [] }
        let older = bodies.secrets.filter { $0.key < change.epoch }
        return older.isEmpty ? [] : [.sendRoleRecord(.epochHistory(older))]
    }

    /// Notes the order of a record that is no role record, and when its signer first spoke:
    /// who has been present longest, as far as this participant saw or its welcome said.
    mutating func noteOrdered(order: UInt64, signer: UUID?, isRoleRecord: Bool) {
        if let signer { seniority[signer] = min(seniority[signer] ?? .max, order) }
        if !isRoleRecord { roleBook.pass(order: order) }
    }

    /// Reviews who holds the roles after anything that may have changed who is present: a
    /// participant that a standing claim named departed, though it is here, takes the role back;
    /// when no operator is present, the longest-present participant (the one whose first record
    /// came first in the order, then the lowest identity) claims it. Each is sent once for the
    /// roles it answers; the book decides, the same everywhere, which claim wins.
    mutating func onRolesReview() -> [RoleReviewDirective] {
        guard isJoined else { return [] }
        let me = localParticipant.id
        let roles = roleBook.current
        if roleBook.isDisplaced(me), !roles.isOperator(me) {
            guard answeredRoles != roles else { return [] }
            answeredRoles = roles
            return [.send(.reinstate)]
        }
        // Without a creator (an invite that named none) nobody holds a role to hand on.
        guard !roles.operators.isEmpty else { return [] }
        // Asked after every relay event: the common answer (an operator is here) costs a lookup
        // per operator and allocates nothing.
        guard !roles.operators.contains(where: { $0 == me || known[$0] != nil }) else { return [] }
        let heir = known.keys.reduce(me) { best, candidate in
            isLongerPresent(candidate, than: best) ? candidate : best
        }
        guard heir == me, answeredRoles != roles else { return [] }
        answeredRoles = roles
        return [.send(.claim(departed: roles.operators.sorted { $0.uuidString < $1.uuidString }))]
    }

    /// Whether `lhs` has been present longer than `rhs`: its first record came earlier in the
    /// order (one never seen comes last), then the lower identity.
    private func isLongerPresent(_ lhs: UUID, than rhs: UUID) -> Bool {
        let (left, right) = (seniority[lhs] ?? .max, seniority[rhs] ?? .max)
        return left != right ? left < right : lhs.uuidString < rhs.uuidString
    }
}
