/// Something a relay tells a joined participant outside the sequence, as `ping` is: a code and a
/// line of text for people (a relay of a cluster says when it cannot order anything).
///
/// Not numbered and not kept for a resumption: a participant that is admitted or resumes starts
/// from "available", since its welcome came through the log (the log took an entry, so the relay
/// could order), and hears "unavailable" only when the relay loses it again.
public struct RelayNotice: Sendable, Hashable, CustomStringConvertible {
    /// What the notice says.
    public var code: RelayNoticeCode
    /// The detail, at most `RelayWireLimits.maximumTextLength` bytes on the wire.
    public var text: String

    /// A notice of `code` with `text`.
    public init(_ code: RelayNoticeCode, _ text: String) {
        self.code = code
        self.text = text
    }

    /// `notice N: text`.
    public var description: String { "notice \(code.rawValue): \(text)" }
}

/// What a `RelayNotice` says, as one byte on the wire.
///
/// A struct rather than an enum so that a newer relay's notice still decodes; a receiver ignores
/// a code it does not know (a notice asks nothing of it).
public struct RelayNoticeCode: RawRepresentable, Sendable, Hashable {
    /// The byte on the wire.
    public let rawValue: UInt8

    /// The code with this byte.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The relay cannot order anything for the session now: its cluster (NATS) is unreachable,
    /// or the session's stream has taken nothing of this relay's for a while. What the
    /// participant sends meanwhile is held, and takes effect late, in order, once it is back.
    public static let unavailable = RelayNoticeCode(rawValue: 1)
    /// The relay orders the session's frames again (after `unavailable`).
    public static let available = RelayNoticeCode(rawValue: 2)
}
