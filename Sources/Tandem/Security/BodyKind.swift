/// What a signed body is, inside what is signed: an open set that each layer extends with
/// static members of its own (numbers 1–255 are Tandem's; a later layer takes the next free one),
/// so that a receiver checks that what arrives on a path is of a kind that path carries.
public struct BodyKind: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The number on the wire.
    public let rawValue: UInt16

    /// The kind numbered `rawValue`.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// A program's message (`GroupSessionMessenger`).
    public static let message = BodyKind(rawValue: 1)
    /// A participant's presence: its display name, signed.
    public static let presence = BodyKind(rawValue: 2)
    /// A playback proposal in the ordered stream.
    public static let playbackProposal = BodyKind(rawValue: 3)
    /// The session's activity description, kept by the relay for joiners.
    public static let activity = BodyKind(rawValue: 4)
    /// An attachment's metadata (its name and size).
    public static let attachmentMetadata = BodyKind(rawValue: 5)
    /// An attachment's data.
    public static let attachmentData = BodyKind(rawValue: 6)
    /// A snapshot of the coordination state in the ordered stream, always signed with a
    /// snapshot's retention (`OrderedRetention.snapshot(reflecting:)`), never with another.
    public static let playbackSnapshot = BodyKind(rawValue: 7)
    /// A chat line in the ordered stream (`GroupSession.sendChat(_:)`), always signed with a
    /// recent retention (`OrderedRetention.recent(count:)`), so that the relay keeps the last
    /// ones for late joiners without reading them.
    public static let chat = BodyKind(rawValue: 8)
    /// A streamed item's request, reply chunk, refusal or holding announcement (`TandemStreaming`),
    /// reliable and addressed to one participant (announcements: to all), so that a joiner
    /// without the file reads it from a holder through the relay, which reads none of it.
    public static let mediaStream = BodyKind(rawValue: 9)
    /// A change to the session's roles or policy in the ordered stream (`RoleChange`), always
    /// signed with a kept retention, so that a late joiner replays every one.
    public static let roles = BodyKind(rawValue: 10)

    /// A word for people and events.
    public var description: String {
        switch self {
        case .message: "message"
        case .presence: "presence"
        case .playbackProposal: "playback-proposal"
        case .activity: "activity"
        case .attachmentMetadata: "attachment-metadata"
        case .attachmentData: "attachment-data"
        case .playbackSnapshot: "playback-snapshot"
        case .chat: "chat"
        case .mediaStream: "media-stream"
        case .roles: "roles"
        default: "kind-\(rawValue)"
        }
    }
}

/// The way a signed body travels, inside what is signed, so that the relay cannot move a body
/// from one path to another (an unreliable message delivered again as a reliable one, a
/// message offered as an ordered proposal). Each path keeps its own replay window per sender.
enum BodyPath: UInt8, Sendable, Hashable {
    /// Reliable messages over the relay's TCP connection.
    case reliable = 1
    /// Unreliable messages (datagrams, or TCP when too large for one).
    case unreliable = 2
    /// The relay's ordered broadcasts.
    case ordered = 3
    /// The journal: attachments and the activity description, kept by the relay.
    case journal = 4
}
