/// Why a relay operation failed, in words a person can act on.
public struct RelayError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure, for programs to branch on.
    public enum Code: String, Sendable, Equatable {
        /// The relay could not be reached.
        case unreachable
        /// The secret did not match the session's.
        case wrongSecret
        /// No such session on the relay (and the request did not create one).
        case sessionNotFound
        /// The session was ended.
        case sessionEnded
        /// A message, attachment or description was larger than the limit.
        case tooLarge
        /// The other side broke the protocol (a malformed frame, an unknown version).
        case protocolViolation
        /// The relay disconnected this participant (flooding, gone too long).
        case disconnected
        /// The link is closed.
        case closed
        /// No answer in time.
        case timedOut
        /// No such attachment.
        case attachmentNotFound
        /// The relay and this participant speak different protocol versions (the detail names both).
        case versionMismatch
        /// The relay did not accept this participant's identity or its own signature.
        case wrongIdentity
        /// The link holds as much unacknowledged sending as its configuration allows: the sender
        /// outran the link (or the relay stopped taking it in).
        case queueFull
        /// The relay creates sessions only for its own host, and this creator did not prove its
        /// creation key.
        case creationRefused
        /// An operator removed this participant from the session; the relay refuses it from then on.
        case removed
        /// The invite expired, or its ticket does not verify.
        case inviteExpired
    }

    /// What kind of failure.
    public let code: Code
    /// The detail: the address, the sizes, the relay's own message.
    public let detail: String

    /// An error of `code` with `detail`.
    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    /// A line for people to read.
    public var description: String {
        switch code {
        case .unreachable: "relay unreachable: \(detail)"
        case .wrongSecret: "wrong secret for session \(detail)"
        case .sessionNotFound: "no session \(detail) on the relay"
        case .sessionEnded: "the session has ended: \(detail)"
        case .tooLarge: "too large: \(detail)"
        case .protocolViolation: "protocol violation: \(detail)"
        case .disconnected: "disconnected by the relay: \(detail)"
        case .closed: "the connection is closed\(detail.isEmpty ? "" : ": \(detail)")"
        case .timedOut: "timed out: \(detail)"
        case .attachmentNotFound: "no attachment \(detail)"
        case .versionMismatch: detail
        case .wrongIdentity: "identity refused: \(detail)"
        case .queueFull: "sending faster than the link delivers: \(detail)"
        case .creationRefused: "the relay refused to create the session: \(detail)"
        case .removed: detail
        case .inviteExpired: "the invite no longer admits: \(detail)"
        }
    }

    /// A body, attachment or description of `size` bytes over `limit`.
    public static func tooLarge(_ what: String, size: Int, limit: Int) -> RelayError {
        RelayError(.tooLarge, "\(what) of \(size) bytes is over the limit of \(limit) bytes")
    }
}
