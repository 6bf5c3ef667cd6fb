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

    /// The same participant: identity alone decides, so one who reconnects (or renames) is the
    /// same participant.
    public static func == (lhs: Participant, rhs: Participant) -> Bool { lhs.id == rhs.id }

    /// Hashes the identity alone.
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }

    /// A line for people to read.
    public var description: String { displayName.isEmpty ? id.uuidString : displayName }

    /// Whether the participant is physically near this device, as Apple's (iOS 17): Apple learns
    /// it from the devices' radios, which a relay cannot see, so it is false here for everyone,
    /// this participant included. A program that groups nearby people asks them.
    public var isNearbyWithLocalParticipant: Bool { false }

    /// A short fingerprint of the participant's key, for telling apart two who share a name:
    /// the first 8 hex digits of the identity, which is itself a hash of the participant's
    /// public key (self-certifying), so that nobody can choose another's fingerprint cheaply.
    public var fingerprint: String { String(id.uuidString.lowercased().prefix(8)) }

    /// The display name, followed by the fingerprint when another of `others` has the same name
    /// as a terminal shows it (control characters stripped, so that `"ana\u{7}"` passes for no
    /// one's twin unnoticed).
    public func name(among others: some Sequence<Participant>) -> String {
        let shown = TerminalText.sanitized(displayName)
        let shared = others.contains { $0.id != id && TerminalText.sanitized($0.displayName) == shown }
        return shared ? "\(displayName) [\(fingerprint)]" : displayName
    }
}
