import Foundation

/// Someone in a group session: an identity that stays the same across reconnections, and a
/// name to show.
public struct Participant: Hashable, Sendable, Identifiable, CustomStringConvertible {
    /// The participant's identity.
    public let id: UUID
    /// The name the participant chose (`--name`), shown to others.
    public let displayName: String

    /// A participant.
    public init(id: UUID = UUID(), displayName: String) {
        self.id = id
        self.displayName = displayName
    }

    // Identity alone decides equality: a participant who reconnects is the same participant.
    public static func == (lhs: Participant, rhs: Participant) -> Bool { lhs.id == rhs.id }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }

    public var description: String { displayName.isEmpty ? id.uuidString : displayName }
}
