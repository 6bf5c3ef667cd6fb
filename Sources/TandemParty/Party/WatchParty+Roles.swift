import Foundation
import Tandem
import TandemPlayback

/// Who runs the party: the operators and who may control playback (the session's roles), the
/// commands that change them, and what each change did, as `roles` events.
extension WatchParty {
    /// The session's roles now.
    public var roles: SessionRoles { session.roles }

    /// Sets the configured policy (`Configuration.control`), once, as the host whose party it is:
    /// the first role record, before anyone is invited.
    func applyConfiguredPolicy() throws {
        guard configuration.isHost, let policy = configuration.control, session.roles.isOperator(session.localParticipant.id) else { return }
        do {
            try session.setPolicy(policy)
        } catch {
            throw WatchPartyError.failure("control: \(error)")
        }
    }

    /// Makes the participant called `name` an operator (`op NAME`).
    public func makeOperator(named name: String) throws {
        let participant = try self.participant(named: name)
        do { try session.makeOperator(participant) } catch { throw WatchPartyError.failure("op: \(error)") }
    }

    /// Takes the operator role from the participant called `name` (`deop NAME`).
    public func revokeOperator(named name: String) throws {
        let participant = try self.participant(named: name)
        do { try session.revokeOperator(participant) } catch { throw WatchPartyError.failure("deop: \(error)") }
    }

    /// Removes the participant called `name` from the party for good (`kick NAME`): the others
    /// move to a new key it never receives, and its session ends with the reason.
    public func remove(named name: String) throws {
        let participant = try self.participant(named: name, verb: "kick")
        do { try session.remove(participant) } catch { throw WatchPartyError.failure("kick: \(error)") }
    }

    /// Moves the party to a new key, removing nobody (`rekey`): what follows is read only with
    /// the new invite (`invite`).
    public func rekey() throws {
        do { try session.rekey() } catch { throw WatchPartyError.failure("rekey: \(error)") }
    }

    /// The invite to pass on now (`invite`): the newest key's, an operator's to see; a clear
    /// error for anyone else.
    public func currentInvite() throws -> String {
        let roles = session.roles
        guard roles.isOperator(session.localParticipant.id) else {
            throw WatchPartyError.failure("invite: only operators may see the invite\(operatorsClause(roles))")
        }
        return session.currentInvitation.url.absoluteString
    }

    /// Sets who may control playback (`control operators|everyone`); who may end the party
    /// stays as it is.
    public func setControl(_ control: SessionPolicy.Control) throws {
        var policy = session.roles.policy
        policy.playback = control
        do { try session.setPolicy(policy) } catch { throw WatchPartyError.failure("control: \(error)") }
    }

    /// Why this participant may not end the party for everyone, nil when it may.
    public var endRefusal: String? {
        let roles = session.roles
        guard !roles.mayEnd(session.localParticipant.id) else { return nil }
        return "only operators may end the party\(operatorsClause(roles)); leave to go alone"
    }

    /// " (ana is an operator)", " (the operators are ana, ben)", "" when there are none.
    func operatorsClause(_ roles: SessionRoles) -> String {
        let names = roles.operators.map(name(of:)).sorted()
        switch names.count {
        case 0: return ""
        case 1: return " (\(names[0]) is an operator)"
        default: return " (the operators are \(names.joined(separator: ", ")))"
        }
    }

    /// The active participant called `name` (as the status line names them, or by its plain
    /// name when only one has it); a clear error otherwise.
    private func participant(named name: String, verb: String = "op") throws -> Participant {
        guard !name.isEmpty else { throw WatchPartyError.usage("name a participant: \(verb) NAME") }
        let active = session.activeParticipants
        if let exact = active.first(where: { $0.name(among: active) == name }) { return exact }
        let plain = active.filter { $0.displayName == name }
        guard plain.count == 1, let only = plain.first else {
            throw WatchPartyError.usage(plain.isEmpty ? "nobody here is called \(name)" : "\(plain.count) participants are called \(name): use the name the status line shows")
        }
        return only
    }

    /// `roles` for every role record, as it is ordered; the automatic claims and reinstatements
    /// that every participant but the winner makes in vain are not reported when refused.
    func followRoles() async {
        for await event in session.roleEvents() {
            if case .invalidated = session.state { return }
            switch event.change {
            case .claim, .reinstate: if event.refusal != nil { continue }
            // Handing on older keys is the kicking operator's client's own follow-up.
            case .epochHistory: if event.refusal == nil { continue }
            default: break
            }
            emit(.roles(.init(event, naming: name(of:))))
        }
    }
}
