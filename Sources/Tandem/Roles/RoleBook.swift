import Foundation

/// The rules every participant applies to the session's role records, in the relay's order: a
/// pure value, so that all participants (and a late joiner replaying the history) accept and
/// refuse the same changes and hold the same roles at every order.
///
/// What the roles were before an order (`roles(before:)`) depends only on the records before
/// it, whenever they were folded in: the playback coordinator asks it of each proposal, so that
/// a proposal's fate never depends on which records its participant happened to have read when
/// it applied it (a late joiner folds the whole history at once).
///
/// The rules, for a record ordered `order` and signed by `sender`:
/// - `grant`, `revoke`, `policy`: the sender is an operator; a revoke never takes the last one;
///   at most `maximumOperators` at once.
/// - `claim(departed:)`: the sender is no operator and not among `departed`, and `departed`
///   names every operator: the sender becomes the one operator. Which participant claims is the
///   session's shell's rule (the longest-present of those left); the first claim in the order
///   wins and any later one is refused.
/// - `reinstate`: the sender is one that the standing claim named departed: it was there after
///   all, so it is an operator again and the claimant's claimed role ends. A participant that
///   claims falsely thus holds the role only until its victim speaks.
/// - `kick`: the sender is an operator, the target is not the sender and not removed already,
///   no box is sealed to the target, and the change is for the next epoch: the target is
///   removed for good (an operator loses the role) and the session moves to that epoch. Of two
///   operators' kicks made for the same epoch, the first in the order wins.
/// - `rekey`: the sender is an operator and the change is for the next epoch.
/// - `epochHistory`: the sender is an operator; the roles do not change.
/// - Nothing a removed participant signs is accepted.
package struct RoleBook: Sendable, Equatable {
    /// The most operators a session holds at once (and a claim names).
    package static let maximumOperators = 64
    /// The most role changes whose orders are remembered for `roles(before:)`; older ones fold
    /// into the baseline.
    static let maximumRemembered = 4096

    /// The session's creator, its first operator; nil when the invite named none.
    package let creator: UUID?
    /// The roles now: after every record folded in.
    package private(set) var current: SessionRoles
    /// The roles before the oldest remembered change.
    private var baseline: SessionRoles
    /// The roles after each accepted change, by the change's order, oldest first.
    private var changes: [(order: UInt64, roles: SessionRoles)] = []
    /// The highest order folded in: a record at or below it is a repeat.
    package private(set) var lastOrder: UInt64 = 0
    /// The operators the standing claim named departed, and who claimed: replaced by the next
    /// claim, cleared by a reinstatement (grants and revokes leave them, so that a claimant
    /// cannot shut its victim out by granting or revoking first).
    private var displaced: Set<UUID> = []
    private var claimant: UUID?

    /// A book for a session created by `creator` (its first operator), under `policy`.
    package init(creator: UUID?, policy: SessionPolicy = SessionPolicy()) {
        self.creator = creator
        current = SessionRoles(operators: creator.map { [$0] } ?? [], policy: policy)
        baseline = current
    }

    /// The roles in force for the record ordered `order`: after every change ordered before it.
    package func roles(before order: UInt64) -> SessionRoles {
        // Changes are few; the newest are the ones asked about.
        for change in changes.reversed() where change.order < order { return change.roles }
        return baseline
    }

    /// Why `change` by `sender` would be refused now, nil when it would be accepted: the rule
    /// `apply` uses, so that a participant checks its own change before sending it.
    package func refusal(of change: RoleChange, by sender: UUID) -> String? {
        let roles = current
        if roles.isRemoved(sender) { return "removed from the session" }
        switch change {
        case .grant(let target):
            guard roles.isOperator(sender) else { return "only operators may make others operators" }
            if roles.isRemoved(target) { return "removed from the session" }
            if roles.isOperator(target) { return "already an operator" }
            if roles.operators.count >= Self.maximumOperators { return "a session holds at most \(Self.maximumOperators) operators" }
        case .revoke(let target):
            guard roles.isOperator(sender) else { return "only operators may take the operator role away" }
            guard roles.isOperator(target) else { return "not an operator" }
            if roles.operators.count == 1 { return "the last operator keeps the role (make another operator first)" }
        case .policy:
            guard roles.isOperator(sender) else { return "only operators may change who controls the session" }
        case .claim(let departed):
            if roles.isOperator(sender) { return "already an operator" }
            if departed.contains(sender) { return "a claimant cannot name itself departed" }
            guard roles.operators.isSubset(of: departed) else { return "an operator is still present" }
        case .reinstate:
            guard displaced.contains(sender), !roles.isOperator(sender) else { return "no claim took the role from this participant" }
        case .kick(let target, let epochChange):
            guard roles.isOperator(sender) else { return "only operators may remove someone" }
            if target == sender { return "an operator cannot remove itself (leave instead)" }
            if roles.isRemoved(target) { return "already removed" }
            if epochChange.boxes[target] != nil { return "the new key was sealed to the one removed" }
            return Self.refusal(of: epochChange, in: roles)
        case .rekey(let epochChange):
            guard roles.isOperator(sender) else { return "only operators may change the session's key" }
            return Self.refusal(of: epochChange, in: roles)
        case .epochHistory:
            guard roles.isOperator(sender) else { return "only operators may hand on the session's older keys" }
        }
        return nil
    }

    /// Why a move to `change`'s epoch would be refused under `roles`: it must be the next one.
    private static func refusal(of change: EpochChange, in roles: SessionRoles) -> String? {
        if roles.epoch == .max { return "the session has used every epoch (start a new one)" }
        if change.epoch != roles.epoch + 1 {
            return "made for epoch \(change.epoch) while the session is in epoch \(roles.epoch) (someone changed the key first)"
        }
        return nil
    }

    /// Folds in the role record ordered `order`, signed by `sender`: the event every
    /// participant reports for it (accepted, or refused with the same reason everywhere), or
    /// nil for a repeat of an order already folded.
    package mutating func apply(_ change: RoleChange, by sender: UUID, order: UInt64) -> SessionRoleEvent? {
        guard order > lastOrder else { return nil }
        lastOrder = order
        if let refusal = refusal(of: change, by: sender) {
            return SessionRoleEvent(originator: sender, change: change, refusal: refusal, roles: current, order: order)
        }
        var roles = current
        switch change {
        case .grant(let target):
            roles.operators.insert(target)
        case .revoke(let target):
            roles.operators.remove(target)
        case .policy(let policy):
            roles.policy = policy
        case .claim:
            displaced = roles.operators
            claimant = sender
            roles.operators = [sender]
        case .reinstate:
            roles.operators.insert(sender)
            if let claimant { roles.operators.remove(claimant) }
            (displaced, claimant) = ([], nil)
        case .kick(let target, let epochChange):
            roles.removed.insert(target)
            roles.operators.remove(target)
            displaced.remove(target)
            roles.epoch = epochChange.epoch
        case .rekey(let epochChange):
            roles.epoch = epochChange.epoch
        case .epochHistory:
            break
        }
        record(roles, at: order)
        return SessionRoleEvent(originator: sender, change: change, refusal: nil, roles: roles, order: order)
    }

    /// Notes that the record ordered `order` was no role record (or failed a check): only the
    /// order moves, so that a repeat of it is recognised.
    package mutating func pass(order: UInt64) {
        lastOrder = max(lastOrder, order)
    }

    private mutating func record(_ roles: SessionRoles, at order: UInt64) {
        current = roles
        changes.append((order, roles))
        if changes.count > Self.maximumRemembered {
            baseline = changes.removeFirst().roles
        }
    }

    /// Whether `participant` was named departed by the claim that stands.
    package func isDisplaced(_ participant: UUID) -> Bool { displaced.contains(participant) }

    package static func == (lhs: RoleBook, rhs: RoleBook) -> Bool {
        lhs.creator == rhs.creator && lhs.current == rhs.current && lhs.baseline == rhs.baseline && lhs.lastOrder == rhs.lastOrder
            && lhs.displaced == rhs.displaced && lhs.claimant == rhs.claimant
            && lhs.changes.elementsEqual(rhs.changes) { $0.order == $1.order && $0.roles == $1.roles }
    }
}
