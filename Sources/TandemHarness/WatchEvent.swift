import Foundation
import TandemParty

/// One line of `tandem host` or `tandem join` output with `--events json`, read back: the typed
/// event (`WatchPartyEvent`) and when it arrived.
///
/// The accessors below are read-only views of the typed event for what reads events by field
/// (the benchmarks, the tests): each is the field of that name of the kinds that carry one, nil
/// for the others.
public struct WatchEvent: Sendable, Equatable {
    /// The event, typed.
    public var payload: WatchPartyEvent
    /// When this process read the line, on the raw CLOCK_MONOTONIC (ns); not part of the JSON.
    public var receivedNanoseconds: Int64

    /// `payload`, received at `receivedNanoseconds` (for tests of what reads events).
    public init(_ payload: WatchPartyEvent, receivedNanoseconds: Int64 = 0) {
        self.payload = payload
        self.receivedNanoseconds = receivedNanoseconds
    }

    /// Parses one output line; nil when it is not a JSON event (the invite, for example).
    public static func parse(_ line: String, receivedAt instant: Int64) -> WatchEvent? {
        WatchPartyEvent(line: line).map { WatchEvent($0, receivedNanoseconds: instant) }
    }

    /// The kind: `joined`, `participant-joined`, `timeline`, `left`, `statistics`…
    public var event: String { payload.name }
    /// A timeline's version (`timeline`, `waiting`, `resumed`, `item-ended`), or the version of
    /// `command-abandoned` and `sync`.
    public var version: Int? {
        switch payload {
        case .commandAbandoned(let fields): fields.version
        case .sync(let fields): fields.version
        default: payload.timeline?.version
        }
    }
    /// A timeline's rate.
    public var rate: Double? { payload.timeline?.rate }
    /// A timeline's anchor media time, in seconds.
    public var mediaTime: Double? { payload.timeline?.mediaTime }
    /// A timeline's anchor session time: the instant the change takes effect (ns).
    public var effectiveSessionNanoseconds: Int64? { payload.timeline?.effectiveSessionNanoseconds }
    /// Who made a change (`timeline`, `resumed`, a proposal's `rejected`).
    public var by: String? {
        switch payload {
        case .timeline(_, let fields): fields.by
        case .resumed(_, let fields): fields.by
        case .proposalRejected(let fields): fields.by
        default: nil
        }
    }
    /// What a change was (`play`, `pause`, `seek 2.000`, `rate 1.5`…; `item-ended`'s too).
    public var change: String? {
        switch payload {
        case .timeline(_, let fields): fields.change
        case .itemEnded(_, let fields): fields.change
        default: nil
        }
    }
    /// Why a participant left (`left`), or why something was rejected (`rejected`).
    public var reason: String? {
        switch payload {
        case .left(let fields): fields.reason
        case .proposalRejected(let fields): fields.reason
        case .bodyRejected(let fields): fields.reason
        default: nil
        }
    }
    /// A participant's name (`participant-joined`, `participant-left`, `away`, `back`).
    public var name: String? {
        switch payload {
        case .participantJoined(let fields), .participantLeft(let fields): fields.name
        case .away(let fields), .back(let fields): fields.name
        default: nil
        }
    }
    /// The local participant's name (`joined`), or the identifier of a chat line's sender
    /// (`chat`) or of an away participant (`away`, `back`).
    public var participant: String? {
        switch payload {
        case .joined(let fields): fields.participant
        case .chat(let fields): fields.participant
        case .away(let fields), .back(let fields): fields.participant
        default: nil
        }
    }
    /// Frames presented (`statistics` of the built-in player, `sync`).
    public var presented: Int? {
        switch payload {
        case .statistics(let fields): fields.presented
        case .sync(let fields): fields.presented
        default: nil
        }
    }
    /// Frames dropped late (`statistics` of the built-in player, `sync`).
    public var dropped: Int? {
        switch payload {
        case .statistics(let fields): fields.dropped
        case .sync(let fields): fields.dropped
        default: nil
        }
    }
    /// An error's text (`error`), or the words of the other kinds that carry a message.
    public var message: String? {
        switch payload {
        case .error(let fields), .history(let fields): fields.message
        case .itemMismatch(let fields): fields.message
        case .proposalRejected(let fields): fields.message
        case .commandAbandoned(let fields): fields.message
        case .unmatchedMedia(let fields): fields.message
        case .streamSuspended(let fields): fields.message
        case .streamRejectedHolder(let fields): fields.message
        default: nil
        }
    }
    /// How long a stall lasts, in seconds (`stall`, `stall-ended`), or a throttle (`throttle`).
    public var seconds: Double? {
        switch payload {
        case .stall(let fields), .stallEnded(let fields): fields.seconds
        case .throttle(let fields): fields.seconds
        default: nil
        }
    }
    /// Whether the group waits for a stall (`stall`, `stall-ended`).
    public var waits: Bool? {
        switch payload {
        case .stall(let fields), .stallEnded(let fields): fields.waits
        default: nil
        }
    }
    /// The group's item's identifier in the queue (`item`, `item-ended`).
    public var identifier: String? {
        switch payload {
        case .item(let fields): fields.identifier
        case .itemEnded(_, let fields): fields.identifier
        default: nil
        }
    }
    /// The item's index in the queue, 0 the first (`item`, `item-ended`).
    public var index: Int? {
        switch payload {
        case .item(let fields): fields.index
        case .itemEnded(_, let fields): fields.index
        default: nil
        }
    }
}
