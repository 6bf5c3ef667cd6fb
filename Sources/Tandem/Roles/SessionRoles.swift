import Foundation

/// Who runs a session, as every participant holds it: its operators and its policy.
///
/// The session's creator is its first operator (its identity travels in the invite,
/// `Invitation.creator`). Operators make others operators and take it back; when the last
/// present operator leaves, the longest-present participant takes the role. Every change is a
/// signed record in the session's order, validated by every participant with the same rules
/// (`RoleBook`), so that all hold the same roles at every order and the relay can neither grant
/// nor forge them.
public struct SessionRoles: Sendable, Hashable, CustomStringConvertible {
    /// The participants who hold the operator role, by identity.
    public internal(set) var operators: Set<UUID>
    /// Who may do what.
    public internal(set) var policy: SessionPolicy
    /// The participants removed from the session (`RoleChange.kick`), by identity: nothing they
    /// sign after their removal is taken.
    public internal(set) var removed: Set<UUID> = []
    /// The session's epoch: 0 under the invite's first secret, one more at each removal or
    /// rekey, each under a fresh secret (`EpochChange`).
    public internal(set) var epoch: UInt16 = 0

    /// Roles with `operators` under `policy`.
    public init(operators: Set<UUID> = [], policy: SessionPolicy = SessionPolicy()) {
        self.operators = operators
        self.policy = policy
    }

    /// Whether `participant` is an operator.
    public func isOperator(_ participant: UUID) -> Bool { operators.contains(participant) }

    /// Whether `participant` was removed from the session.
    public func isRemoved(_ participant: UUID) -> Bool { removed.contains(participant) }

    /// Whether `participant` may change playback (play, pause, seek, rate, the item, the queue).
    public func mayChangePlayback(_ participant: UUID) -> Bool {
        !isRemoved(participant) && (policy.playback == .everyone || isOperator(participant))
    }

    /// Whether `participant` may end the session for everyone.
    public func mayEnd(_ participant: UUID) -> Bool {
        !isRemoved(participant) && (policy.ending == .everyone || isOperator(participant))
    }

    /// A line for logs: the operators' identities, the policy and the epoch.
    public var description: String {
        "operators \(operators.map(\.uuidString).sorted().joined(separator: ",")); \(policy); epoch \(epoch)"
    }
}

/// Who may change playback and who may end a session.
public struct SessionPolicy: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Who may do something: everyone, or the operators alone.
    public enum Control: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
        /// Every participant.
        case everyone
        /// Operators only.
        case operators

        /// The word, as commands and events spell it (`everyone`, `operators`).
        public var description: String { rawValue }
    }

    /// Who may change playback: play, pause, seek, the rate, the item and the queue. Beginning
    /// and ending one's own suspensions (buffering, stalls) and reporting what one loaded stay
    /// everyone's.
    public var playback: Control
    /// Who may end the session for everyone (`GroupSession.end()`).
    public var ending: Control

    /// A policy: everyone may do everything unless told otherwise (a library session's default,
    /// as Apple's `end()` is anyone's).
    public init(playback: Control = .everyone, ending: Control = .everyone) {
        self.playback = playback
        self.ending = ending
    }

    /// A line for people: "playback: operators, ending: operators".
    public var description: String { "playback: \(playback), ending: \(ending)" }
}

/// A change to a session's roles or policy, as a participant proposes it and every participant
/// validates it in order.
public enum RoleChange: Sendable, Hashable, CustomStringConvertible {
    /// Make `participant` an operator (an operator's to make).
    case grant(UUID)
    /// Take the operator role from `participant` (an operator's to make; never the last one's).
    case revoke(UUID)
    /// Set the session's policy (an operator's to make).
    case policy(SessionPolicy)
    /// Take the operator role because every operator has left: `departed` names them all
    /// (a participant's who is no operator; the first such claim in the order wins).
    case claim(departed: [UUID])
    /// Take back the operator role a claim took from this participant, which had not left.
    case reinstate
    /// Remove `participant` from the session for good, moving everyone else to the new epoch
    /// `change` hands them (an operator's to make, never of itself).
    case kick(UUID, EpochChange)
    /// Move everyone to the new epoch `change` hands them, removing nobody: an invite that
    /// leaked stops admitting once the relay knows (an operator's to make).
    case rekey(EpochChange)
    /// The older epochs' secrets, sealed in the newer epoch this record is sealed under, so that a
    /// late joiner holding only the newest secret reads the whole history (an operator's to
    /// send, after its kick or rekey was accepted).
    case epochHistory([UInt16: SessionSecret])

    /// The change in a few words, for logs.
    public var description: String {
        switch self {
        case .kick(let id, let change): "kick \(id) (epoch \(change.epoch))"
        case .rekey(let change): "rekey (epoch \(change.epoch))"
        case .epochHistory(let secrets): "epoch history (\(secrets.count) epochs)"
        case .grant(let id): "grant \(id)"
        case .revoke(let id): "revoke \(id)"
        case .policy(let policy): "policy (\(policy))"
        case .claim(let departed): "claim (departed: \(departed.count))"
        case .reinstate: "reinstate"
        }
    }
}

/// What a role change did, or why every participant refused it.
public struct SessionRoleEvent: Sendable, Hashable {
    /// Who made the change.
    public let originator: UUID
    /// The change.
    public let change: RoleChange
    /// Why it was refused, nil when it was accepted.
    public let refusal: String?
    /// The roles after it (unchanged when refused).
    public let roles: SessionRoles
    /// The order the relay gave it.
    public let order: UInt64
}
