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

    /// Roles with `operators` under `policy`.
    public init(operators: Set<UUID> = [], policy: SessionPolicy = SessionPolicy()) {
        self.operators = operators
        self.policy = policy
    }

    /// Whether `participant` is an operator.
    public func isOperator(_ participant: UUID) -> Bool { operators.contains(participant) }

    /// Whether `participant` may change playback (play, pause, seek, rate, the item, the queue).
    public func mayChangePlayback(_ participant: UUID) -> Bool {
        policy.playback == .everyone || isOperator(participant)
    }

    /// Whether `participant` may end the session for everyone.
    public func mayEnd(_ participant: UUID) -> Bool {
        policy.ending == .everyone || isOperator(participant)
    }

    /// A line for logs: the operators' identities and the policy.
    public var description: String {
        "operators \(operators.map(\.uuidString).sorted().joined(separator: ",")); \(policy)"
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

    /// The change in a few words, for logs.
    public var description: String {
        switch self {
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
