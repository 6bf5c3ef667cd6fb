import Foundation

/// One line of `tandem host` or `tandem join` output with `--events json`, read back.
///
/// Every field but `event` is optional, because each kind of event carries its own.
///
/// A temporary copy of `Sources/TandemTestKit/WatchEvent.swift` (which `Package.swift` leaves out
/// of TandemTestKit): `WatchProcess` and the benchmarks read events with it until the library's
/// typed watch-party events replace both.
public struct WatchEvent: Sendable, Decodable, Equatable {
    /// The kind: `joined`, `participant-joined`, `timeline`, `left`, `statistics`…
    public var event: String
    /// A timeline's version.
    public var version: Int?
    /// A timeline's rate.
    public var rate: Double?
    /// A timeline's anchor media time, in seconds.
    public var mediaTime: Double?
    /// A timeline's anchor session time: the instant the change takes effect (ns).
    public var effectiveSessionNanoseconds: Int64?
    /// Who made a change.
    public var by: String?
    /// What a change was (`play`, `pause`, `seek 2.000`, `rate 1.5`…).
    public var change: String?
    /// Why a participant left.
    public var reason: String?
    /// A participant's name (`participant-joined`, `participant-left`).
    public var name: String?
    /// The local participant's name (`joined`).
    public var participant: String?
    /// Frames presented (`statistics`).
    public var presented: Int?
    /// Frames dropped late (`statistics`).
    public var dropped: Int?
    /// An error's text (`error`).
    public var message: String?
    /// How long a stall lasts, in seconds (`stall`, `stall-ended`).
    public var seconds: Double?
    /// Whether the group waits for a stall (`stall`, `stall-ended`).
    public var waits: Bool?
    /// `item`: the group's item's identifier in the queue.
    public var identifier: String?
    /// `item`: the item's index in the queue (0 is the first).
    public var index: Int?
    /// When this process read the line, on the raw CLOCK_MONOTONIC (ns); not part of the JSON.
    public var receivedNanoseconds: Int64 = 0

    enum CodingKeys: String, CodingKey {
        case event, version, rate, by, change, reason, name, participant, presented, dropped, message, seconds, waits, identifier, index
        case mediaTime = "media_time"
        case effectiveSessionNanoseconds = "effective_session_ns"
    }

    /// An event of kind `event` with no fields yet (for tests of what reads events).
    public init(event: String) {
        self.event = event
    }

    /// Parses one output line; nil when it is not a JSON event (the invite, for example).
    public static func parse(_ line: String, receivedAt instant: Int64) -> WatchEvent? {
        guard line.hasPrefix("{"), var event = try? JSONDecoder().decode(WatchEvent.self, from: Data(line.utf8)) else {
            return nil
        }
        event.receivedNanoseconds = instant
        return event
    }
}
