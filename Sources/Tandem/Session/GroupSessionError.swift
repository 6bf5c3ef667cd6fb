import TandemNet

/// Why a session ended for this participant, or why an operation on it failed.
public struct GroupSessionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of ending or failure.
    public enum Code: String, Sendable, Equatable {
        /// This participant left.
        case left
        /// Someone ended the session for everyone.
        case ended
        /// The relay could not be reached or refused the session.
        case relay
        /// No relay is configured.
        case noRelay
        /// The session was used in a state that does not allow it (sending before joining).
        case notJoined
        /// A message or attachment over the size limit; nothing was sent.
        case tooLarge
        /// A message or attachment could not be encoded or read.
        case encoding
        /// No program here handles the invite's activity. (`accept` no longer throws it: a
        /// session of a type nobody asked for yet waits for the first `sessions()` of its type.)
        case unknownActivity
        /// No such attachment.
        case attachmentNotFound
        /// A journal item whose type has no representation for the attachment's content type
        /// (or none that exports).
        case unsupportedType
        /// The session's roles or policy do not let this participant do it (`SessionRoles`).
        case notPermitted
        /// An operator removed this participant from the session (`RoleChange.kick`), or moved
        /// the session to a key this participant did not receive.
        case removed
    }

    /// What kind of ending or failure.
    public let code: Code
    /// The detail, in words a person can act on.
    public let detail: String
    /// The relay's own error behind a `.relay` (or other) failure, for programs that tell people
    /// what to do about it (an unreachable relay, a session the relay does not know).
    public let relayError: RelayError?

    init(_ code: Code, _ detail: String, relayError: RelayError? = nil) {
        self.code = code
        self.detail = detail
        self.relayError = relayError
    }

    /// A line for people to read.
    public var description: String { detail }

    static func from(_ error: RelayError) -> GroupSessionError {
        switch error.code {
        case .tooLarge: GroupSessionError(.tooLarge, error.description, relayError: error)
        case .sessionEnded: GroupSessionError(.ended, error.description, relayError: error)
        case .removed: GroupSessionError(.removed, error.description, relayError: error)
        case .attachmentNotFound: GroupSessionError(.attachmentNotFound, error.description, relayError: error)
        default: GroupSessionError(.relay, error.description, relayError: error)
        }
    }
}
