/// Why the relay refused or dropped a connection, or failed a request, as one byte on the wire.
///
/// A struct rather than an enum so that a code from a newer relay still decodes; the receiver
/// treats a code it does not know as a protocol violation.
public struct RelayFaultCode: RawRepresentable, Sendable, Hashable {
    /// The byte on the wire.
    public let rawValue: UInt8

    /// The code with this byte.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The proof did not match the session's secret.
    public static let wrongSecret = RelayFaultCode(rawValue: 1)
    /// No such session, and the request did not create one.
    public static let sessionNotFound = RelayFaultCode(rawValue: 2)
    /// The session was ended.
    public static let sessionEnded = RelayFaultCode(rawValue: 3)
    /// Something was larger than its limit.
    public static let tooLarge = RelayFaultCode(rawValue: 4)
    /// A malformed frame, an unknown version, a frame out of place.
    public static let protocolViolation = RelayFaultCode(rawValue: 5)
    /// The relay dropped the participant (gone too long, replaced, or a full outbox).
    public static let disconnected = RelayFaultCode(rawValue: 6)
    /// No such attachment.
    public static let attachmentNotFound = RelayFaultCode(rawValue: 7)
    /// The connection sent more than its rate allows.
    public static let flooding = RelayFaultCode(rawValue: 8)
    /// The relay is full (sessions, participants or journal bytes).
    public static let limitReached = RelayFaultCode(rawValue: 9)
    /// The peer speaks another protocol version (the text names both).
    public static let versionMismatch = RelayFaultCode(rawValue: 10)
    /// The participant's identity is not the one its public key certifies, or its own signature
    /// did not verify (a resumption by someone other than the participant).
    public static let wrongIdentity = RelayFaultCode(rawValue: 11)
    /// The relay cannot take this now: its cluster (NATS) is unreachable; try again later.
    public static let unavailable = RelayFaultCode(rawValue: 12)
    /// The relay creates sessions only for its own host (one holding its creation key), and the
    /// hello did not prove that key. A peer that does not know the code reads a protocol
    /// violation, with the relay's text.
    public static let creationRefused = RelayFaultCode(rawValue: 13)
    /// An operator removed the participant from the session: its connection is dropped and its
    /// proofs refused from then on. A peer that does not know the code reads a protocol
    /// violation, with the relay's text.
    public static let removed = RelayFaultCode(rawValue: 14)
    /// The invite's ticket expired (the relay's clock is past the expiry its creator signed), does
    /// not verify, or is missing for a session whose invites expire.
    public static let inviteExpired = RelayFaultCode(rawValue: 15)
    /// The session's policy does not let this participant do that (ending the session, when
    /// only operators may).
    public static let notPermitted = RelayFaultCode(rawValue: 16)
}
