import Foundation
import TandemMediaTypes

/// What happens in a watch party, one case per event: what `tandem host` and `tandem join`
/// print with `--events json` (one JSON object a line, its kind under `"event"`), what the
/// benchmarks read back, and what `WatchParty` reports.
///
/// The JSON is the contract: each case's fields keep their names and meaning, and new fields or
/// kinds are only ever added. A line of a kind this version does not know decodes as `other`,
/// so that a reader of an older version carries on.
public enum WatchPartyEvent: Sendable, Equatable, Codable {
    /// This participant joined (`joined`).
    case joined(Joined)
    /// The session is over for this participant (`left`).
    case left(Left)
    /// Another participant joined (`participant-joined`).
    case participantJoined(Participant)
    /// Another participant left (`participant-left`).
    case participantLeft(Participant)
    /// The relay saw another participant's connection closed by its peer (`away`); it departs
    /// 3 s later unless it resumes.
    case away(Presence)
    /// An away participant resumed (`back`).
    case back(Presence)
    /// The group's timeline changed (`timeline`).
    case timeline(Timeline, Change)
    /// The group waits for suspended participants (`waiting`).
    case waiting(Timeline, Waiting)
    /// The group plays on after waiting (`resumed`).
    case resumed(Timeline, Resumed)
    /// The group stopped waiting for a participant whose suspension held it for its longest
    /// hold (`hold-expired`).
    case holdExpired(Timeline, HoldExpired)
    /// A notice this participant's program showed (`GroupSession.showNotice(_:)`), for this
    /// participant only (`notice`).
    case notice(Notice)
    /// The group's item reached its end (`item-ended`).
    case itemEnded(Timeline, ItemEnded)
    /// Participants play different content under one name (`item-mismatch`).
    case itemMismatch(ItemMismatch)
    /// Every participant skipped a proposal (`rejected`, with `by` and `order`).
    case proposalRejected(ProposalRejected)
    /// The session dropped bodies on arrival (`rejected`, with `sender`, `path` and `count`).
    case bodyRejected(BodyRejected)
    /// The player did not complete a command by its due date (`command-abandoned`).
    case commandAbandoned(CommandAbandoned)
    /// What restoring the group's history from a snapshot found (`history`).
    case history(Message)
    /// A chat line, this participant's own included (`chat`).
    case chat(Chat)
    /// The latency offset now in force (`latency-offset`).
    case latencyOffset(LatencyOffset)
    /// The built-in player froze on command (`stall`).
    case stall(Stall)
    /// A commanded stall ended (`stall-ended`).
    case stallEnded(Stall)
    /// The built-in player ran out of decoded frames by itself (`stalled`).
    case stalled
    /// The built-in player's own stall is over (`stall-recovered`).
    case stallRecovered
    /// The built-in player decodes slower for a while (`throttle`, bench only).
    case throttle(Throttle)
    /// The throttle is over (`throttle-ended`).
    case throttleEnded(ThrottleEnded)
    /// One of this participant's files matches no item of the queue (`unmatched-media`).
    case unmatchedMedia(UnmatchedMedia)
    /// The group's item changed in a queue of several (`item`).
    case item(Item)
    /// The built-in player's counts as it closes (`statistics`).
    case statistics(Statistics)
    /// mpv's counts as it closes (`statistics`, with `player` `mpv`).
    case mpvStatistics(MpvStatistics)
    /// Every five seconds with the built-in player: the clock and the sync error (`sync`).
    case sync(Sync)
    /// A command was refused (`error`); the process carries on.
    case error(Message)
    /// This participant streams the group's item from its holders (`streaming`).
    case streaming(Streaming)
    /// No holder of a streamed item is left (`stream-suspended`).
    case streamSuspended(StreamSuspended)
    /// A holder of a streamed item is back (`stream-resumed`).
    case streamResumed(StreamResumed)
    /// A holder's copy is not the item, and it is not asked again (`stream-rejected-holder`).
    case streamRejectedHolder(StreamRejectedHolder)
    /// mpv exited, which is leaving (`mpv-exited`).
    case mpvExited(MpvExited)
    /// The session's relay, one of a cluster, cannot order the group's changes now, or can again
    /// (`relay`, `state` `unavailable` or `available`).
    case relay(Relay)
    /// What another participant says of its own health, as it arrives (`health`).
    case health(Health)
    /// The relay gave another participant a different record than this one under one order
    /// (`relay-divergence`): the relay is showing people different histories.
    case relayDivergence(RelayDivergence)
    /// The relay's session time ran ahead of this participant's own clock by more than delivery
    /// and drift allow (`relay-time-jump`): the first jump at once, then at most one count of
    /// the jumps since every ten seconds.
    case relayTimeJump(RelayTimeJump)
    /// A change of the session's roles or policy, accepted or refused alike by every
    /// participant (`roles`).
    case roles(Roles)
    /// A kind this version does not know, or a line whose fields do not fit its kind: its name
    /// and its other fields as they were.
    case other(name: String, fields: [String: JSONValue])

    /// The kind, as `"event"` names it.
    public var name: String {
        switch self {
        case .joined: "joined"
        case .left: "left"
        case .participantJoined: "participant-joined"
        case .participantLeft: "participant-left"
        case .away: "away"
        case .back: "back"
        case .timeline: "timeline"
        case .waiting: "waiting"
        case .resumed: "resumed"
        case .holdExpired: "hold-expired"
        case .notice: "notice"
        case .itemEnded: "item-ended"
        case .itemMismatch: "item-mismatch"
        case .proposalRejected, .bodyRejected: "rejected"
        case .commandAbandoned: "command-abandoned"
        case .history: "history"
        case .chat: "chat"
        case .latencyOffset: "latency-offset"
        case .stall: "stall"
        case .stallEnded: "stall-ended"
        case .stalled: "stalled"
        case .stallRecovered: "stall-recovered"
        case .throttle: "throttle"
        case .throttleEnded: "throttle-ended"
        case .unmatchedMedia: "unmatched-media"
        case .item: "item"
        case .statistics, .mpvStatistics: "statistics"
        case .sync: "sync"
        case .error: "error"
        case .streaming: "streaming"
        case .streamSuspended: "stream-suspended"
        case .streamResumed: "stream-resumed"
        case .streamRejectedHolder: "stream-rejected-holder"
        case .mpvExited: "mpv-exited"
        case .relay: "relay"
        case .health: "health"
        case .relayDivergence: "relay-divergence"
        case .relayTimeJump: "relay-time-jump"
        case .roles: "roles"
        case .other(let name, _): name
        }
    }

    /// The group's timeline that `timeline`, `waiting`, `resumed`, `hold-expired` and `item-ended`
    /// announce.
    public var timeline: Timeline? {
        switch self {
        case .timeline(let timeline, _), .waiting(let timeline, _), .resumed(let timeline, _), .itemEnded(let timeline, _),
             .holdExpired(let timeline, _): timeline
        default: nil
        }
    }

    private enum NameKey: String, CodingKey {
        case event
    }

    /// Reads one event object: its `event`, then the fields of that kind; a kind not known, or
    /// fields that do not fit it, give `other`.
    public init(from decoder: any Decoder) throws {
        let name = try decoder.container(keyedBy: NameKey.self).decode(String.self, forKey: .event)
        if let known = try? Self.decodeKnown(name, from: decoder) {
            self = known
        } else {
            var fields = try decoder.singleValueContainer().decode([String: JSONValue].self)
            fields["event"] = nil
            self = .other(name: name, fields: fields)
        }
    }

    private static func decodeKnown(_ name: String, from decoder: any Decoder) throws -> WatchPartyEvent? {
        func fields<T: Decodable>(_ type: T.Type = T.self) throws -> T { try T(from: decoder) }
        let keys = Set(try decoder.container(keyedBy: AnyKey.self).allKeys.map(\.stringValue))
        switch name {
        case "joined": return .joined(try fields())
        case "left": return .left(try fields())
        case "participant-joined": return .participantJoined(try fields())
        case "participant-left": return .participantLeft(try fields())
        case "away": return .away(try fields())
        case "back": return .back(try fields())
        case "timeline": return .timeline(try fields(), try fields())
        case "waiting": return .waiting(try fields(), try fields())
        case "resumed": return .resumed(try fields(), try fields())
        case "hold-expired": return .holdExpired(try fields(), try fields())
        case "notice": return .notice(try fields())
        case "item-ended": return .itemEnded(try fields(), try fields())
        case "item-mismatch": return .itemMismatch(try fields())
        case "rejected": return keys.contains("path") ? .bodyRejected(try fields()) : .proposalRejected(try fields())
        case "command-abandoned": return .commandAbandoned(try fields())
        case "history": return .history(try fields())
        case "chat": return .chat(try fields())
        case "latency-offset": return .latencyOffset(try fields())
        case "stall": return .stall(try fields())
        case "stall-ended": return .stallEnded(try fields())
        case "stalled": return .stalled
        case "stall-recovered": return .stallRecovered
        case "throttle": return .throttle(try fields())
        case "throttle-ended": return .throttleEnded(try fields())
        case "unmatched-media": return .unmatchedMedia(try fields())
        case "item": return .item(try fields())
        case "statistics": return keys.contains("player") ? .mpvStatistics(try fields()) : .statistics(try fields())
        case "sync": return .sync(try fields())
        case "error": return .error(try fields())
        case "streaming": return .streaming(try fields())
        case "stream-suspended": return .streamSuspended(try fields())
        case "stream-resumed": return .streamResumed(try fields())
        case "stream-rejected-holder": return .streamRejectedHolder(try fields())
        case "mpv-exited": return .mpvExited(try fields())
        case "relay": return .relay(try fields())
        case "health": return .health(try fields())
        case "relay-divergence": return .relayDivergence(try fields())
        case "relay-time-jump": return .relayTimeJump(try fields())
        case "roles": return .roles(try fields())
        default: return nil
        }
    }

    /// Writes `event` and the kind's fields into one object.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: NameKey.self)
        try container.encode(name, forKey: .event)
        switch self {
        case .joined(let fields): try fields.encode(to: encoder)
        case .left(let fields): try fields.encode(to: encoder)
        case .participantJoined(let fields), .participantLeft(let fields): try fields.encode(to: encoder)
        case .away(let fields), .back(let fields): try fields.encode(to: encoder)
        case .timeline(let timeline, let fields):
            try timeline.encode(to: encoder)
            try fields.encode(to: encoder)
        case .waiting(let timeline, let fields):
            try timeline.encode(to: encoder)
            try fields.encode(to: encoder)
        case .resumed(let timeline, let fields):
            try timeline.encode(to: encoder)
            try fields.encode(to: encoder)
        case .holdExpired(let timeline, let fields):
            try timeline.encode(to: encoder)
            try fields.encode(to: encoder)
        case .notice(let fields): try fields.encode(to: encoder)
        case .itemEnded(let timeline, let fields):
            try timeline.encode(to: encoder)
            try fields.encode(to: encoder)
        case .itemMismatch(let fields): try fields.encode(to: encoder)
        case .proposalRejected(let fields): try fields.encode(to: encoder)
        case .bodyRejected(let fields): try fields.encode(to: encoder)
        case .commandAbandoned(let fields): try fields.encode(to: encoder)
        case .history(let fields), .error(let fields): try fields.encode(to: encoder)
        case .chat(let fields): try fields.encode(to: encoder)
        case .latencyOffset(let fields): try fields.encode(to: encoder)
        case .stall(let fields), .stallEnded(let fields): try fields.encode(to: encoder)
        case .stalled, .stallRecovered: break
        case .throttle(let fields): try fields.encode(to: encoder)
        case .throttleEnded(let fields): try fields.encode(to: encoder)
        case .unmatchedMedia(let fields): try fields.encode(to: encoder)
        case .item(let fields): try fields.encode(to: encoder)
        case .statistics(let fields): try fields.encode(to: encoder)
        case .mpvStatistics(let fields): try fields.encode(to: encoder)
        case .sync(let fields): try fields.encode(to: encoder)
        case .streaming(let fields): try fields.encode(to: encoder)
        case .streamSuspended(let fields): try fields.encode(to: encoder)
        case .streamResumed(let fields): try fields.encode(to: encoder)
        case .streamRejectedHolder(let fields): try fields.encode(to: encoder)
        case .mpvExited(let fields): try fields.encode(to: encoder)
        case .relay(let fields): try fields.encode(to: encoder)
        case .health(let fields): try fields.encode(to: encoder)
        case .relayDivergence(let fields): try fields.encode(to: encoder)
        case .relayTimeJump(let fields): try fields.encode(to: encoder)
        case .roles(let fields): try fields.encode(to: encoder)
        case .other(_, let fields):
            var container = encoder.container(keyedBy: AnyKey.self)
            for (key, value) in fields where key != "event" { try container.encode(value, forKey: AnyKey(key)) }
        }
    }
}

/// Any key of an object.
struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }

    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

extension WatchPartyEvent {
    /// Reads one line of `--events json`; nil when it is not a JSON event (the invite, a
    /// readable line).
    public init?(line: String) {
        guard line.hasPrefix("{"), let event = try? JSONDecoder().decode(WatchPartyEvent.self, from: Data(line.utf8)) else { return nil }
        self = event
    }

    /// The event's fields (without `event`) as a tree.
    public var fields: [String: JSONValue] {
        guard case .object(var fields) = (try? JSONValueEncoder.encode(self)) ?? .object([:]) else { return [:] }
        fields["event"] = nil
        return fields
    }

    /// The event as one line of `--events json`: its keys sorted, and DEL, the C1 controls and
    /// the bidirectional controls written as `\u` escapes (JSON allows them raw inside strings,
    /// but a terminal showing the line would act on them).
    /// Nil when a number is not finite (JSON has none).
    public var jsonLine: String? {
        var object = fields.mapValues(\.foundationObject)
        object["event"] = name
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return nil }
        return Self.escapingControls(String(decoding: data, as: UTF8.self))
    }

    /// `json` with DEL, the C1 controls and the bidirectional controls escaped (the serializer
    /// escapes C0 already; outside strings JSON has none of these).
    static func escapingControls(_ json: String) -> String {
        guard json.unicodeScalars.contains(where: { $0.value >= 0x7F && $0.value <= 0x9F || (0x202A...0x202E).contains($0.value)
            || (0x2066...0x2069).contains($0.value) }) else { return json }
        var result = ""
        for scalar in json.unicodeScalars {
            switch scalar.value {
            case 0x00...0x1F, 0x7F...0x9F, 0x202A...0x202E, 0x2066...0x2069:
                result += String(format: "\\u%04x", scalar.value)
            default:
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// The event's readable details: `key=value` for each field, by key (values as Swift shows
    /// them), unsanitised; the readable line is `name details`.
    public var details: String {
        fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.readable)" }.joined(separator: " ")
    }
}
