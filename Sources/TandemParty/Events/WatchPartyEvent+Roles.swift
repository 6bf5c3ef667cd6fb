import Foundation
import Tandem

extension WatchPartyEvent {
    /// `roles`: what a role record did: who (`by`), the change in words (`change`: `op NAME`,
    /// `deop NAME`, `control operators`, `claim`, `reinstate`, `kick NAME`, `rekey`, `keys`), the operators after it, who may
    /// control playback (`control`), and why every participant refused it (`refused`, absent
    /// when accepted).
    public struct Roles: Sendable, Equatable, Codable {
        /// Who made the change.
        public var by: String
        /// The change, as the command that makes it reads.
        public var change: String
        /// The operators after it, by name.
        public var operators: [String]
        /// Who may control playback after it: `everyone` or `operators`.
        public var control: String
        /// Why it was refused; nil when accepted.
        public var refused: String?

        /// The fields.
        public init(by: String, change: String, operators: [String], control: String, refused: String? = nil) {
            (self.by, self.change, self.operators, self.control, self.refused) = (by, change, operators, control, refused)
        }

        /// The fields for `event`, naming participants with `name`.
        public init(_ event: SessionRoleEvent, naming name: (UUID) -> String) {
            let change = switch event.change {
            case .grant(let id): "op \(name(id))"
            case .revoke(let id): "deop \(name(id))"
            case .policy(let policy): "control \(policy.playback)"
            case .claim: "claim"
            case .reinstate: "reinstate"
            case .kick(let id, _): "kick \(name(id))"
            case .rekey: "rekey"
            case .epochHistory: "keys"
            }
            self.init(by: name(event.originator), change: change, operators: event.roles.operators.map(name).sorted(),
                      control: event.roles.policy.playback.rawValue, refused: event.refusal)
        }
    }
}

extension EventSentence {
    /// "Ana made Ben an operator", "Ana let operators alone control playback", "Ana removed Ben
    /// from the party", "Ben took over as
    /// operator (everyone who had the role left)", "Ben could not make Cy an operator: only
    /// operators may make others operators".
    static func rolesSentence(_ roles: WatchPartyEvent.Roles) -> String {
        let words = roles.change.split(separator: " ", maxSplits: 1).map(String.init)
        let subject = words.count > 1 ? words[1] : ""
        if let refused = roles.refused {
            let attempt = switch words.first ?? "" {
            case "op": "make \(subject) an operator"
            case "deop": "take the operator role from \(subject)"
            case "control": "change who controls playback"
            case "kick": "remove \(subject)"
            case "rekey": "change the party's key"
            case "keys": "hand on the party's older keys"
            default: "take the operator role"
            }
            return "\(roles.by) could not \(attempt): \(refused)"
        }
        return switch words.first ?? "" {
        case "op": "\(roles.by) made \(subject) an operator"
        case "deop": "\(roles.by) took the operator role from \(subject)"
        case "control" where subject == "operators": "\(roles.by) let operators alone control playback"
        case "control": "\(roles.by) let everyone control playback"
        case "reinstate": "\(roles.by) is back as operator (they had not left)"
        case "kick": "\(roles.by) removed \(subject) from the party"
        case "rekey": "\(roles.by) changed the party's key: only the new invite reads what follows"
        case "keys": "\(roles.by) handed on the party's older keys to those who join later"
        default: "\(roles.by) took over as operator (everyone who had the role left)"
        }
    }
}
