import Foundation

/// Why a received body was dropped instead of delivered.
public struct RejectionReason: RawRepresentable, Sendable, Hashable, Error, CustomStringConvertible {
    /// The word in events and statistics.
    public let rawValue: String

    /// The reason named `rawValue`.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// It did not open with the session's key, or what it held is not a signed body.
    public static let malformed = RejectionReason(rawValue: "malformed")
    /// Its sender id is not the one its public key certifies (or the relay announced such a
    /// participant).
    public static let forgedIdentity = RejectionReason(rawValue: "forged-identity")
    /// Its signature does not verify.
    public static let badSignature = RejectionReason(rawValue: "bad-signature")
    /// It was signed for another session.
    public static let wrongSession = RejectionReason(rawValue: "wrong-session")
    /// The relay attributed it to someone other than its signer.
    public static let wrongSender = RejectionReason(rawValue: "wrong-sender")
    /// It was not addressed to this participant.
    public static let notRecipient = RejectionReason(rawValue: "not-recipient")
    /// Its kind, path or attachment is not what it arrived as.
    public static let wrongKind = RejectionReason(rawValue: "wrong-kind")
    /// Its counter was seen already, or is older than the replay window.
    public static let replayed = RejectionReason(rawValue: "replayed")

    /// It was sealed under an epoch's key this participant does not hold (a participant removed
    /// from the session holds none of the epochs after its removal).
    public static let unknownEpoch = RejectionReason(rawValue: "unknown-epoch")
    /// Its signer was removed from the session (`RoleChange.kick`) before it was ordered or
    /// received.
    public static let removed = RejectionReason(rawValue: "removed")

    /// The word.
    public var description: String { rawValue }
}

/// A body dropped on arrival: why, and who signed it (or whom the relay named) when known.
public struct Rejection: Sendable, Hashable, CustomStringConvertible {
    /// Why it was dropped.
    public let reason: RejectionReason
    /// Its signer when the signature verified, else whom the relay named as its sender, if anyone.
    public let sender: UUID?
    /// What it arrived as: "message", "ordered", "attachment", "activity", "participant".
    public let path: String

    /// A rejection.
    public init(reason: RejectionReason, sender: UUID?, path: String) {
        self.reason = reason
        self.sender = sender
        self.path = path
    }

    /// A line for people to read.
    public var description: String { "rejected \(path) from \(sender?.uuidString ?? "unknown"): \(reason)" }
}
