import Foundation

/// A participant as frames carry it: identity and display name.
public struct RelayParticipantEntry: Sendable, Hashable {
    /// The participant's identity.
    public var id: UUID
    /// The name shown to others, at most `RelayWireLimits.maximumNameLength` UTF-8 bytes.
    public var displayName: String

    /// An entry.
    public init(id: UUID, displayName: String) {
        self.id = id
        self.displayName = displayName
    }
}
