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
        guard let change = RoleRecord.decode(signed.payload) else {
            roleBook.pass(order: order)
            return [reject(Rejection(reason: .malformed, sender: signed.sender, path: "roles"))]
        }
        let before = roleBook.current
        guard let event = roleBook.apply(change, by: signed.sender, order: order) else { return [] }
        return [.roleEvent(event)] + (roleBook.current == before ? [] : [.publishRoles(roleBook.current)])
    }

    /// Notes the order of a record that is no role record, and when its signer first spoke:
    /// who has been present longest, as far as this participant saw.
    mutating func noteOrdered(order: UInt64, signer: UUID?, isRoleRecord: Bool) {
        if let signer, seniority[signer] == nil { seniority[signer] = order }
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
