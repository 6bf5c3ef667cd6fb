import Foundation
import TandemNet
import TandemWire

// The session's roles from a program: who the operators are, the policy, and the changes an
// operator makes. Each change is a signed role record in the session's order, checked here
// first with the rules every participant applies (`RoleBook`), so that a change this
// participant may not make throws at once with the reason.
extension GroupSession {
    /// Makes `participant` an operator: it may then change the policy and others' roles, and
    /// control playback under an operators-only policy. Throws `.notPermitted` with the reason
    /// when this participant may not (it is no operator, or `participant` is one already), or
    /// when the session is not joined.
    public func makeOperator(_ participant: Participant) throws(GroupSessionError) {
        try sendRoleChange(.grant(participant.id), naming: participant)
    }

    /// Takes the operator role from `participant` (this participant's own included). The last
    /// operator keeps it: make another operator first. Throws `.notPermitted` with the reason.
    public func revokeOperator(_ participant: Participant) throws(GroupSessionError) {
        try sendRoleChange(.revoke(participant.id), naming: participant)
    }

    /// Sets who may change playback and who may end the session. An operator's to set; throws
    /// `.notPermitted` with the reason otherwise.
    public func setPolicy(_ policy: SessionPolicy) throws(GroupSessionError) {
        try sendRoleChange(.policy(policy), naming: nil)
    }

    /// Removes `participant` from the session for good: everyone else moves to a new epoch's
    /// secret, sealed to each of their own keys, that `participant` never receives, and its
    /// session ends with "removed by" this participant's name. Nothing it signs is taken after
    /// the removal's order. Throws `.notPermitted` with the reason when this participant may not
    /// (it is no operator, `participant` is itself or removed already), or when the session is
    /// not joined.
    public func remove(_ participant: Participant) throws(GroupSessionError) {
        let change = try nextEpoch(excluding: participant.id)
        try sendRoleChange(.kick(participant.id, change), naming: participant)
    }

    /// Moves everyone to a new epoch's secret, removing nobody, so that an invite that leaked
    /// no longer reads what is sent from then on (`currentInvitation` is the new one). An
    /// operator's to do; throws `.notPermitted` with the reason otherwise.
    public func rekey() throws(GroupSessionError) {
        try sendRoleChange(.rekey(try nextEpoch(excluding: nil)), naming: nil)
    }

    /// The invite to pass on now: the newest epoch's secret, which opens the whole history.
    /// It is `invitation` until an operator removes someone or rekeys the session.
    ///
    /// When the session's invites expire, an operator's invite of a later epoch carries a fresh
    /// ticket, signed with this participant's own key, admitting for the lifetime the first
    /// ticket named from now on (the relay takes the tickets of the operators it knows).
    public var currentInvitation: Invitation {
        let (current, isOperator) = onLoopAndWait { [self] in
            var current = invitation
            let epoch = bodies.epoch
            if let secret = bodies.secret(of: epoch) {
                current.secret = secret
                current.epoch = epoch
            }
            return (current, machine.roleBook.current.isOperator(localParticipant.id))
        }
        guard current.epoch > 0, isOperator, let ticket = current.ticket, let lifetime = InviteTicket.lifetime(of: ticket) else { return current }
        var renewed = current
        let expiry = UInt64(max(0, Date().timeIntervalSince1970)) + UInt64(lifetime)
        renewed.ticket = InviteTicket.make(sessionID: current.sessionID, expiry: expiry, lifetime: lifetime, key: bodies.identity)
        return renewed
    }

    /// A fresh secret for the epoch after the current one, sealed to every participant this
    /// one knows (itself included) but `excluded`. The relay takes the new epoch's verifier from
    /// any operator it knows (`RelayAuthority`), so any operator may make one.
    private func nextEpoch(excluding excluded: UUID?) throws(GroupSessionError) -> EpochChange {
        let (epoch, keys) = onLoopAndWait { [self] in
            var keys = machine.keys.filter { machine.known[$0.key] != nil && !machine.roleBook.current.isRemoved($0.key) }
            keys[localParticipant.id] = bodies.identity.publicKey
            if let excluded { keys[excluded] = nil }
            return (machine.roleBook.current.epoch, keys)
        }
        guard epoch < .max else { throw GroupSessionError(.notPermitted, "the session has used all \(UInt16.max) epochs (start a new one)") }
        guard let change = EpochChange(epoch: epoch + 1, secret: SessionSecret(), for: keys) else {
            throw GroupSessionError(.notPermitted, "a new key can be handed to at most \(EpochChange.maximumBoxes) participants")
        }
        return change
    }

    /// What each role record did from now on, in the session's order: accepted, or refused with
    /// the reason every participant gives (`SessionRoleEvent.refusal`). One stream per reader,
    /// keeping the newest 64 when the reader falls behind, finished when the session is
    /// invalidated.
    public func roleEvents() -> AsyncStream<SessionRoleEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: SessionRoleEvent.self, bufferingPolicy: .bufferingNewest(64))
        let id = readerID()
        addReader({ [self] in readers.roleEvents[id] = continuation }, else: { continuation.finish() })
        continuation.onTermination = { [weak self] _ in
            self?.onLoop { [weak self] in _ = self?.readers.roleEvents.removeValue(forKey: id) }
        }
        return stream
    }

    /// The roles in force for the ordered record numbered `order`: after every role record
    /// ordered before it, whatever has been received since (`RoleBook.roles(before:)`). On the
    /// session's loop, where the coordinator's records are delivered.
    package func roles(before order: UInt64) -> SessionRoles {
        onLoopAndWait { [self] in machine.roleBook.roles(before: order) }
    }

    /// The display name of `id`, as this participant knows it ("someone" when it does not).
    package func displayName(of id: UUID) -> String {
        participant(identifiedBy: id)?.displayName ?? "someone"
    }

    /// Checks `change` with the book's rules, then sends it for ordering with this participant's
    /// statement of it for the relay (`SessionMachine.recordBytes(for:)`); `naming` is whom a
    /// refusal names.
    private func sendRoleChange(_ change: RoleChange, naming subject: Participant?) throws(GroupSessionError) {
        // Checked, counted and sent in one turn of the loop, so that this participant's records
        // reach the relay in the order of their statements' counters.
        let sent = onLoopAndWait { [self] () -> Result<Void, GroupSessionError> in
            if let refusal = machine.roleBook.refusal(of: change, by: localParticipant.id) {
                return .failure(GroupSessionError(.notPermitted, subject.map { "\($0.displayName): \(refusal)" } ?? refusal))
            }
            return Result { () throws(GroupSessionError) in try sendRoleRecord(change) }
        }
        try sent.get()
    }

    /// Seals `change` as this participant's role record and sends it for ordering with its
    /// statement for the relay (`SessionMachine.recordBytes(for:)`), on the loop.
    func sendRoleRecord(_ change: RoleChange) throws(GroupSessionError) {
        loop.preconditionInLoop()
        let (bytes, statement) = machine.recordBytes(for: change)
        guard let statement, let link = sendingLink as? RelayClientLink else {
            return try sendOrdered(bytes, kind: .roles, retention: .kept)
        }
        do {
            try link.sendOrdered(bodies.seal(bytes, kind: .roles, path: .ordered, retention: .kept), statement: statement)
        } catch {
            throw GroupSessionError.from(error)
        }
    }

    /// Carries out the machine's review of who holds the roles (a handover's claim, or taking
    /// back a role a false claim took). On the loop; a change that cannot be sent now is sent
    /// at the next review that finds it still due.
    func reviewRoles() {
        loop.preconditionInLoop()
        for directive in machine.onRolesReview() {
            switch directive {
            case .send(let change):
                if (try? sendRoleRecord(change)) == nil { machine.answeredRoles = nil }
            }
        }
    }
}
