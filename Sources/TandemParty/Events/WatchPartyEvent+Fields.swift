/// The fields of each kind of `WatchPartyEvent`, named in JSON as `--events json` names them.
extension WatchPartyEvent {
    /// `joined`: this participant is in the session.
    public struct Joined: Sendable, Equatable, Codable {
        /// The session's identifier.
        public var session: String
        /// This participant's own name.
        public var participant: String
        /// The group's item, as the activity names it.
        public var item: String
        /// `mpv` when mpv shows the media (absent for the built-in player).
        public var player: String?
        /// mpv's IPC socket.
        public var mpvIPC: String?
        /// True when the item is streamed from its holders (the event comes before the stream opens).
        public var streamed: Bool?
        /// With `streamed`: when the stream began opening, on the raw CLOCK_MONOTONIC (ns).
        public var monotonicNanoseconds: Int64?

        /// The fields.
        public init(session: String, participant: String, item: String, player: String? = nil, mpvIPC: String? = nil,
                    streamed: Bool? = nil, monotonicNanoseconds: Int64? = nil) {
            (self.session, self.participant, self.item, self.player, self.mpvIPC) = (session, participant, item, player, mpvIPC)
            (self.streamed, self.monotonicNanoseconds) = (streamed, monotonicNanoseconds)
        }

        enum CodingKeys: String, CodingKey {
            case session, participant, item, player, streamed
            case mpvIPC = "mpv_ipc"
            case monotonicNanoseconds = "monotonic_ns"
        }
    }

    /// `left`: why the session is over for this participant.
    public struct Left: Sendable, Equatable, Codable {
        /// The reason, in words (`left`, `ended by …`, the connection's loss).
        public var reason: String

        /// The fields.
        public init(reason: String) { self.reason = reason }
    }

    /// `participant-joined`, `participant-left`: another participant.
    public struct Participant: Sendable, Equatable, Codable {
        /// Its name (with a fingerprint when two share one).
        public var name: String

        /// The fields.
        public init(name: String) { self.name = name }
    }

    /// `away`, `back`: another participant's connection.
    /// Whether the session's relay can order the group's changes (`relay`).
    public struct Relay: Sendable, Equatable, Codable {
        /// `unavailable` (the relay lost NATS, or the session's stream took nothing for a while)
        /// or `available` (it orders again).
        public var state: String
        /// Why it cannot, with `unavailable`.
        public var reason: String?

        /// The fields.
        public init(state: String, reason: String? = nil) { (self.state, self.reason) = (state, reason) }
    }

    /// Another participant, by identifier and name (`away`, `back`).
    public struct Presence: Sendable, Equatable, Codable {
        /// Its identifier (a UUID).
        public var participant: String
        /// Its name.
        public var name: String

        /// The fields.
        public init(participant: String, name: String) { (self.participant, self.name) = (participant, name) }
    }

    /// The group's timeline, as `timeline`, `waiting`, `resumed` and `item-ended` announce it.
    public struct Timeline: Sendable, Equatable, Codable {
        /// Its version.
        public var version: Int
        /// Its rate (0: paused).
        public var rate: Double
        /// Its anchor media time (s).
        public var mediaTime: Double
        /// Its anchor session time: the instant the change takes effect (ns).
        public var effectiveSessionNanoseconds: Int64
        /// The item it plays ("" before any).
        public var item: String

        /// The fields.
        public init(version: Int, rate: Double, mediaTime: Double, effectiveSessionNanoseconds: Int64, item: String) {
            (self.version, self.rate, self.mediaTime, self.effectiveSessionNanoseconds, self.item) = (version, rate, mediaTime, effectiveSessionNanoseconds, item)
        }

        enum CodingKeys: String, CodingKey {
            case version, rate, item
            case mediaTime = "media_time"
            case effectiveSessionNanoseconds = "effective_session_ns"
        }
    }

    /// `timeline`: who changed it, and how.
    public struct Change: Sendable, Equatable, Codable {
        /// The originator's name.
        public var by: String
        /// The change in a few words: `play`, `pause`, `seek 2.000`, `rate 1.5`, `item NAME`, `next`…
        public var change: String
        /// For a gated play's real start: the provisional version it completes, which never
        /// takes effect.
        public var completes: Int?

        /// The fields.
        public init(by: String, change: String, completes: Int? = nil) { (self.by, self.change, self.completes) = (by, change, completes) }
    }

    /// `waiting`: whom the group waits for.
    public struct Waiting: Sendable, Equatable, Codable {
        /// `NAME: REASON` for each suspension the group waits for (`for`).
        public var waitingFor: [String]

        /// The fields.
        public init(waitingFor: [String]) { self.waitingFor = waitingFor }

        enum CodingKeys: String, CodingKey {
            case waitingFor = "for"
        }
    }

    /// `resumed`: who let the group play on.
    public struct Resumed: Sendable, Equatable, Codable {
        /// The originator's name.
        public var by: String

        /// The fields.
        public init(by: String) { self.by = by }
    }

    /// `item-ended`: what follows the end of the item.
    public struct ItemEnded: Sendable, Equatable, Codable {
        /// The next item's identifier, or the ended one's when the group pauses.
        public var identifier: String
        /// The next item's index in the queue (-1: none).
        public var index: Int
        /// `end of item: next` or `end of item: paused`.
        public var change: String

        /// The fields.
        public init(identifier: String, index: Int, change: String) { (self.identifier, self.index, self.change) = (identifier, index, change) }
    }

    /// `item-mismatch`: participants play different content under one name.
    public struct ItemMismatch: Sendable, Equatable, Codable {
        /// The item's name.
        public var item: String
        /// The participants who reported it, by name, sorted.
        public var participants: [String]
        /// In words.
        public var message: String

        /// The fields.
        public init(item: String, participants: [String], message: String) {
            (self.item, self.participants, self.message) = (item, participants, message)
        }
    }

    /// `rejected` (a proposal): every participant skipped it.
    public struct ProposalRejected: Sendable, Equatable, Codable {
        /// Its originator's name.
        public var by: String
        /// Its place in the session's order.
        public var order: Int
        /// Why, in a word or two.
        public var reason: String
        /// In words.
        public var message: String

        /// The fields.
        public init(by: String, order: Int, reason: String, message: String) {
            (self.by, self.order, self.reason, self.message) = (by, order, reason, message)
        }
    }

    /// `rejected` (bodies): the session dropped bodies of one kind on arrival, counted over a
    /// second (`RejectionTally`): the first at once, then how many more each second they come.
    public struct BodyRejected: Sendable, Equatable, Codable {
        /// Why (`Rejection.reason`'s raw value).
        public var reason: String
        /// Their signer, or whom the relay named (a UUID), or `unknown`.
        public var sender: String
        /// What they arrived as.
        public var path: String
        /// How many, since the last `rejected` of this reason, sender and path.
        public var count: Int

        /// The fields.
        public init(reason: String, sender: String, path: String, count: Int = 1) {
            (self.reason, self.sender, self.path, self.count) = (reason, sender, path, count)
        }
    }

    /// `command-abandoned`: a command the player did not complete in time.
    public struct CommandAbandoned: Sendable, Equatable, Codable {
        /// The timeline version it carried out.
        public var version: Int
        /// In words.
        public var message: String

        /// The fields.
        public init(version: Int, message: String) { (self.version, self.message) = (version, message) }
    }

    /// `history` and `error`: one message.
    public struct Message: Sendable, Equatable, Codable {
        /// In words.
        public var message: String

        /// The fields.
        public init(message: String) { self.message = message }
    }

    /// `chat`: a line of the group's chat.
    public struct Chat: Sendable, Equatable, Codable {
        /// The sender's name.
        public var from: String
        /// The sender's identifier (a UUID).
        public var participant: String
        /// The text, as sent.
        public var text: String

        /// The fields.
        public init(from: String, participant: String, text: String) { (self.from, self.participant, self.text) = (from, participant, text) }
    }

    /// `health`: what a participant says of its own health (`HealthReport`).
    public struct Health: Sendable, Equatable, Codable {
        /// Its name.
        public var from: String
        /// Its identifier.
        public var participant: String
        /// `playing`, `paused`, `waiting` or `stalled`.
        public var state: String
        /// `built-in` or `mpv`.
        public var player: String
        /// Its latency offset (ms, `offset_ms`).
        public var offset: Int
        /// How late its pictures are against the group's timeline (µs, `lateness_us`), if measured.
        public var lateness: Int?
        /// How late its sound reaches its output against the group's timeline (µs,
        /// `sound_lateness_us`), where it plays sound and has written some.
        public var soundLateness: Int?
        /// Its clock's error bound (µs, `clock_error_us`), once known.
        public var clockError: Int?
        /// Its round trip to the relay's time service (µs, `round_trip_us`), once measured.
        public var roundTrip: Int?
        /// Whether it is further from the group than `HealthReport.offThreshold`, or stalled.
        public var off: Bool

        /// The fields of `report`, from `from` (`participant`).
        public init(from: String, participant: String, report: HealthReport) {
            (self.from, self.participant, self.lateness, self.clockError) = (from, participant, report.pictureLateness, report.clockErrorBound)
            (self.state, self.player, self.offset, self.off) = (report.state.rawValue, report.player.rawValue, report.latencyOffset, report.isOff)
            roundTrip = report.roundTrip
            soundLateness = report.soundLateness
        }

        enum CodingKeys: String, CodingKey {
            case from, participant, state, player, off
            case lateness = "lateness_us"
            case soundLateness = "sound_lateness_us"
            case clockError = "clock_error_us"
            case roundTrip = "round_trip_us"
            case offset = "offset_ms"
        }
    }

    /// `relay-divergence`: another participant's record under `order` is not this one's.
    public struct RelayDivergence: Sendable, Equatable, Codable {
        /// The other participant's name.
        public var with: String
        /// Its identifier.
        public var participant: String
        /// The order under which the two records differ.
        public var order: UInt64

        /// The fields.
        public init(with: String, participant: String, order: UInt64) { (self.with, self.participant, self.order) = (with, participant, order) }
    }

    /// `relay-time-jump`: the relay's session time ran ahead of this participant's own clock.
    public struct RelayTimeJump: Sendable, Equatable, Codable {
        /// The newest order at which it did.
        public var order: UInt64
        /// How far past the bound, the furthest among the jumps counted (whole ms, `ahead_ms`).
        public var aheadMilliseconds: Int
        /// How many jumps this stands for: 1 for a jump said at once, else the jumps since the
        /// last line.
        public var count: Int

        /// The fields.
        public init(order: UInt64, aheadMilliseconds: Int, count: Int) {
            (self.order, self.aheadMilliseconds, self.count) = (order, aheadMilliseconds, count)
        }

        enum CodingKeys: String, CodingKey {
            case order, count
            case aheadMilliseconds = "ahead_ms"
        }
    }

    /// `latency-offset`: the offset now in force.
    public struct LatencyOffset: Sendable, Equatable, Codable {
        /// How much earlier than the group's timeline this player presents (ms, `ms`).
        public var milliseconds: Int

        /// The fields.
        public init(milliseconds: Int) { self.milliseconds = milliseconds }

        enum CodingKeys: String, CodingKey {
            case milliseconds = "ms"
        }
    }

    /// `stall`, `stall-ended`: a commanded stall.
    public struct Stall: Sendable, Equatable, Codable {
        /// How long it lasts (s).
        public var seconds: Double
        /// Whether the group waits for it.
        public var waits: Bool

        /// The fields.
        public init(seconds: Double, waits: Bool) { (self.seconds, self.waits) = (seconds, waits) }
    }

    /// `throttle`: the built-in player decodes `factor` times slower for `seconds`.
    public struct Throttle: Sendable, Equatable, Codable {
        /// How many times slower.
        public var factor: Double
        /// For how long (s).
        public var seconds: Double

        /// The fields.
        public init(factor: Double, seconds: Double) { (self.factor, self.seconds) = (factor, seconds) }
    }

    /// `throttle-ended`: the factor the player decodes at again.
    public struct ThrottleEnded: Sendable, Equatable, Codable {
        /// The `--decode-throttle` factor.
        public var factor: Double

        /// The fields.
        public init(factor: Double) { self.factor = factor }
    }

    /// `unmatched-media`: one of this participant's files matches no item of the queue.
    public struct UnmatchedMedia: Sendable, Equatable, Codable {
        /// Its path.
        public var file: String
        /// In words.
        public var message: String

        /// The fields.
        public init(file: String, message: String) { (self.file, self.message) = (file, message) }
    }

    /// `item`: the group's item in a queue of several.
    public struct Item: Sendable, Equatable, Codable {
        /// Its identifier in the queue.
        public var identifier: String
        /// Its index (0 is the first; -1 when the queue does not hold it).
        public var index: Int
        /// How many entries the queue holds.
        public var count: Int

        /// The fields.
        public init(identifier: String, index: Int, count: Int) { (self.identifier, self.index, self.count) = (identifier, index, count) }
    }

    /// `statistics` of the built-in player.
    public struct Statistics: Sendable, Equatable, Codable {
        /// Frames presented.
        public var presented: Int
        /// Frames dropped late.
        public var dropped: Int
        /// Still frames shown (the picture held while paused or seeking).
        public var stills: Int

        /// The fields.
        public init(presented: Int, dropped: Int, stills: Int) { (self.presented, self.dropped, self.stills) = (presented, dropped, stills) }
    }

    /// `statistics` of mpv.
    public struct MpvStatistics: Sendable, Equatable, Codable {
        /// `mpv`.
        public var player: String
        /// `scheduled` or `on-receipt`.
        public var follow: String
        /// Readings of mpv's clock compared with the timeline.
        public var measurements: Int
        /// Speed nudges.
        public var nudges: Int
        /// Corrective seeks (fresh starts).
        public var correctiveSeeks: Int
        /// Changes a person made in mpv itself, proposed to the group.
        public var mpvProposals: Int
        /// Position readings written to the presentation log.
        public var readings: Int
        /// Lined-up starts.
        public var starts: Int
        /// The last measured error (ms).
        public var lastErrorMilliseconds: Double?
        /// The last start's error (ms).
        public var lastStartErrorMilliseconds: Double?

        /// The fields.
        public init(player: String = "mpv", follow: String, measurements: Int, nudges: Int, correctiveSeeks: Int, mpvProposals: Int,
                    readings: Int, starts: Int, lastErrorMilliseconds: Double? = nil, lastStartErrorMilliseconds: Double? = nil) {
            (self.player, self.follow, self.measurements, self.nudges, self.correctiveSeeks) = (player, follow, measurements, nudges, correctiveSeeks)
            (self.mpvProposals, self.readings, self.starts) = (mpvProposals, readings, starts)
            (self.lastErrorMilliseconds, self.lastStartErrorMilliseconds) = (lastErrorMilliseconds, lastStartErrorMilliseconds)
        }

        enum CodingKeys: String, CodingKey {
            case player, follow, measurements, nudges, readings, starts
            case correctiveSeeks = "corrective_seeks"
            case mpvProposals = "mpv_proposals"
            case lastErrorMilliseconds = "last_error_ms"
            case lastStartErrorMilliseconds = "last_start_error_ms"
        }
    }

    /// `sync`: the clock and how far the player is from the shared timeline.
    public struct Sync: Sendable, Equatable, Codable {
        /// The session clock's offset from the local clock (ns).
        public var clockOffsetNanoseconds: Int64
        /// Its error bound (ns).
        public var clockErrorBoundNanoseconds: Int64
        /// The timeline's version.
        public var version: Int
        /// The player's media time less the timeline's (ns; absent while nothing is expected).
        public var syncErrorNanoseconds: Int64?
        /// Frames presented so far.
        public var presented: Int
        /// Frames dropped late so far.
        public var dropped: Int

        /// The fields.
        public init(clockOffsetNanoseconds: Int64, clockErrorBoundNanoseconds: Int64, version: Int, syncErrorNanoseconds: Int64?,
                    presented: Int, dropped: Int) {
            (self.clockOffsetNanoseconds, self.clockErrorBoundNanoseconds, self.version) = (clockOffsetNanoseconds, clockErrorBoundNanoseconds, version)
            (self.syncErrorNanoseconds, self.presented, self.dropped) = (syncErrorNanoseconds, presented, dropped)
        }

        enum CodingKeys: String, CodingKey {
            case version, presented, dropped
            case clockOffsetNanoseconds = "clock_offset_ns"
            case clockErrorBoundNanoseconds = "clock_error_bound_ns"
            case syncErrorNanoseconds = "sync_error_ns"
        }
    }

    /// `streaming`: the group's item read from its holders.
    public struct Streaming: Sendable, Equatable, Codable {
        /// The item's name.
        public var item: String
        /// Its content identity (without a duration).
        public var identity: String
        /// Its holders, by name, the host first.
        public var holders: [String]

        /// The fields.
        public init(item: String, identity: String, holders: [String]) { (self.item, self.identity, self.holders) = (item, identity, holders) }
    }

    /// `stream-suspended`: no holder of a streamed item is left.
    public struct StreamSuspended: Sendable, Equatable, Codable {
        /// The item's content identity.
        public var identity: String
        /// In words.
        public var message: String

        /// The fields.
        public init(identity: String, message: String) { (self.identity, self.message) = (identity, message) }
    }

    /// `stream-resumed`: a holder is back.
    public struct StreamResumed: Sendable, Equatable, Codable {
        /// The item's content identity.
        public var identity: String

        /// The fields.
        public init(identity: String) { self.identity = identity }
    }

    /// `stream-rejected-holder`: a holder whose copy's ends do not match the identity.
    public struct StreamRejectedHolder: Sendable, Equatable, Codable {
        /// The item's content identity.
        public var identity: String
        /// The holder's name.
        public var holder: String
        /// In words.
        public var message: String

        /// The fields.
        public init(identity: String, holder: String, message: String) { (self.identity, self.holder, self.message) = (identity, holder, message) }
    }

    /// `mpv-exited`: mpv's exit status.
    public struct MpvExited: Sendable, Equatable, Codable {
        /// Its status (-1 when not known).
        public var status: Int

        /// The fields.
        public init(status: Int) { self.status = status }
    }
}
