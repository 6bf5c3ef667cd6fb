import Foundation

/// A participant as frames carry it: identity, signing key and display name.
///
/// The identity is self-certifying: it is derived from a hash of `publicKey` (see
/// `RelayAuthenticator.participantID(for:)` in TandemNet), so that a relay which pairs an
/// identity with another key is caught by every receiver, and the relay itself refuses a hello
/// whose identity and key do not match.
public struct RelayParticipantEntry: Sendable, Hashable {
    /// The participant's identity.
    public var id: UUID
    /// The participant's Ed25519 public key (`RelayWireLimits.publicKeyLength` bytes), fresh for
    /// each session.
    public var publicKey: [UInt8]
    /// The name shown to others, at most `RelayWireLimits.maximumNameLength` UTF-8 bytes. The
    /// relay's word only: participants believe the name in the signed presence.
    public var displayName: String
    /// The participant's signed presence, sealed (opaque to the relay), at most
    /// `RelayWireLimits.maximumPresence` bytes: given in its hello and kept by the relay for as
    /// long as the session, so that everyone (late joiners too) learns the name it signed.
    public var presence: [UInt8]
    /// Whether the participant has left: a welcome lists former participants too, so that a late
    /// joiner knows who signed the records it receives.
    public var departed: Bool

    /// An entry.
    public init(id: UUID, publicKey: [UInt8], displayName: String, presence: [UInt8] = [], departed: Bool = false) {
        self.id = id
        self.publicKey = publicKey
        self.displayName = displayName
        self.presence = presence
        self.departed = departed
    }
}
