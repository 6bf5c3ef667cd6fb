import TandemClock
import TandemPlayback

/// `MpvPlayer`'s decisions as a pure value: what to send mpv, given what mpv reports and what the
/// group's coordinator commands. Every input comes with the current host instant and returns
/// directives for the shell to carry out (send mpv this, read mpv's position, wake me at, complete
/// the coordinator's command, propose this to the group, begin or end a stall suspension, show
/// this on mpv's screen); the machine never reads a clock, waits, or talks to mpv itself.
///
/// In the manner of `CoordinatorMachine` and `RelayLinkCore`: each `on…` method returns
/// `[Directive]`, and one timer serves every wait (`Directive.wake(at:)` names the next instant
/// the machine wants to be woken at; the shell keeps one timer, replaced by each).
///
/// What it decides, with the same rules as the player's measured behaviour
/// (`MpvMachine+Start.swift` says what mpv does):
/// - **A start on a timeline** (a play, a rate change, a large error): pause, set the speed, seek
///   exactly to where the timeline will be once the seek has landed (`seekLead` ahead), wait for
///   `playback-restart`, read the frame landed on (seeking on where mpv has no audio clock), and
///   unpause when the timeline reaches that frame, less mpv's start latency; then read the start's
///   error and trim it with one pulse of speed, or start again once if it is beyond `trimLimit`.
///   A start whose instant is far off lets mpv play on until the start must begin.
/// - **A pause** at the command's instant, and a seek while paused; a seek in anticipation of
///   playback (a pre-roll) completes the coordinator's command once mpv has landed, and the play
///   that follows unpauses on that frame without seeking again.
/// - **Another item**: a command for an item this participant holds loads it (paused) and is
///   carried out once mpv has it. mpv holds one item, so a command with time to spare before its
///   instant (the group's pre-roll of the next item, a second before the current one ends) puts
///   the load off until `loadLead` before that instant: mpv plays the current item on meanwhile.
/// - **Corrections** every `correctionInterval` while playing: `CorrectionPolicy` decides between
///   nothing, a nudge of speed (with the audio output's lag taken out of the reading) and a start
///   afresh.
/// - **A person's changes**, told from Tandem's own by an `MpvRequestLedger`: proposed to the
///   group, mpv held (no correction, stale commands ignored) until the group answers, and paused
///   for a seek or a change of speed until the answer or `answerWait`.
/// - **Keys bound in mpv's window** (`MpvMachine.Key`): proposed to the group without touching
///   mpv, so that mpv moves at the group's instant like every other participant
///   (`proposal(for:rate:intendedRate:position:duration:)`; `MpvPlayer` asks it with the group's
///   timeline as its coordinator has it at the press, which the commands reach the machine after).
/// - **Buffering** (`paused-for-cache`) while the group plays: a stall suspension, ended when mpv
///   has its cache again.
public struct MpvMachine: Sendable {
    /// What the machine decides with.
    public struct Configuration: Sendable, Equatable {
        /// The correction policy for a file with sound (its audio clock read to a fraction of a ms).
        public var policy = CorrectionPolicy()
        /// The correction policy for a file without sound (read only to half a frame).
        public var soundlessPolicy = CorrectionPolicy(deadband: 15_000_000, correctionThreshold: 40_000_000, seekThreshold: 400_000_000)
        /// How often mpv's position is measured while it plays.
        public var correctionInterval = TimeSpan.milliseconds(250)
        /// How long mpv, paused for a person's seek or change of speed, waits for the group's
        /// answer before it plays on from where the person put it.
        public var answerWait = TimeSpan.milliseconds(150)
        /// How long a person's proposal holds the player at most, answered or not.
        public var holdLimit = TimeSpan.seconds(3)
        /// How much longer than the measured landing time a start aims ahead.
        public var startMargin = TimeSpan.milliseconds(15)
        /// How far before its target an exact seek may land (mpv keeps a frame less than 5 ms before it).
        public var landingTolerance = TimeSpan.milliseconds(10)
        /// How long a seek may take to land before the machine gives up waiting for it.
        public var landingTimeout = TimeSpan.seconds(2)
        /// How often the landed frame is read again while it is still an earlier seek's.
        public var landingReadInterval = TimeSpan.milliseconds(2)
        /// How long the landed frame is read again before the last reading is taken as it is.
        public var landingReadLimit = TimeSpan.milliseconds(500)
        /// How long after a start the corrections leave mpv alone.
        public var startSettling = TimeSpan.milliseconds(100)
        /// How long before the instant a command for another item names mpv loads that item,
        /// at least: mpv holds one item, so its pre-roll of the next one is the load itself, and
        /// until then it plays the current one on to its end (twice the last load's time when
        /// that is longer, at most `itemLoadLeadLimit`).
        public var itemLoadLead = TimeSpan.milliseconds(400)
        /// The longest lead a load of another item is given.
        public var itemLoadLeadLimit = TimeSpan.seconds(1)
        /// How long after an unpause the start's error is read (the first few ms of sound read apart).
        public var learningDelay = TimeSpan.milliseconds(30)
        /// How long the pulse of speed that trims a start's error lasts.
        public var trimDuration = TimeSpan.seconds(1)
        /// The largest start error trimmed by a pulse; beyond it, the start is made again once.
        public var trimLimit = TimeSpan.milliseconds(10)
        /// How much further on a start that landed where mpv has no audio clock seeks again.
        public var audioClockSkip = TimeSpan.milliseconds(100)
        /// How many times a start seeks on for an audio clock.
        public var audioClockSkips = 3
        /// mpv's start latency at its first unpause, which starts its sound output.
        public var firstStartLatency = TimeSpan.milliseconds(1)
        /// Whether mpv renders each frame at its display time (`MpvPlayer.Options.rendersAtDisplayTime`),
        /// where some frames have no audio clock after landing.
        public var rendersAtDisplayTime = true
        /// How far apart (relative) two rates may be and still be one rate.
        public var sameRateTolerance = 1e-4
        /// A reading whose round trip took longer than this is not precise enough to correct by.
        public var correctionRoundTrip = TimeSpan.milliseconds(1)
        /// How close a paused mpv must be to a pause's or a seek's target to be left there.
        public var pauseTolerance = TimeSpan.milliseconds(2)
        /// The smallest change of speed, as a fraction, whose step the output's lag is learned from.
        public var lagLearningChange = 0.005
        /// When mpv keeps the pitch of sound played faster or slower, switched in a start on a
        /// timeline while mpv is paused, before its seek (`MpvPlayer+Pitch.swift` says why); nil
        /// leaves `audio-pitch-correction` alone.
        public var pitchCorrection: MpvPitchCorrection?
        /// The defaults, those of `MpvPlayer`.
        public init() {}
    }

    /// What mpv has loaded, as far as the decisions need it.
    public struct Item: Sendable, Equatable {
        /// The item's identifier in the group.
        public var identifier: String
        /// Whether mpv plays sound for it, and so has an audio clock to read.
        public var hasAudio: Bool
        /// One frame.
        public var frameDuration: TimeSpan
        /// The item's duration, as mpv reads it.
        public var duration: TimeSpan?
        /// How far `time-pos` leads the elapsed media time while playing.
        public var positionLead: TimeSpan

        /// An item of these properties.
        public init(identifier: String, hasAudio: Bool, frameDuration: TimeSpan = TimeSpan(nanoseconds: 33_333_333), duration: TimeSpan?,
                    positionLead: TimeSpan = .zero) {
            self.identifier = identifier
            self.hasAudio = hasAudio
            self.frameDuration = frameDuration
            self.duration = duration
            self.positionLead = positionLead
        }
    }

    /// A request to mpv over its IPC.
    public enum Request: Sendable, Equatable {
        /// Set `pause`.
        case pause(Bool)
        /// Set `speed` (already rounded to four decimals).
        case speed(Double)
        /// `seek <seconds> absolute exact`.
        case seek(ItemTime)
        /// Read a position: answer with `onReading(_:now:)` under this identity.
        case read(id: UInt64, Property)
        /// Set `audio-pitch-correction`.
        case pitchCorrection(Bool)
        /// Load the item the group moved to (`loadfile`, paused): answer with `onItemLoaded(_:now:)`
        /// or `onItemFailed(_:now:)`.
        case load(identifier: String)
    }

    /// A property a reading reads.
    public enum Property: Sendable, Equatable {
        /// `audio-pts`, the audio clock: precise, only while playing a file with sound. The shell
        /// takes the best of up to three round trips.
        case audioClock
        /// `time-pos`, the frame shown (nil while mpv seeks).
        case framePosition
    }

    /// What the group is asked for (the shell calls the coordinator, and reports a refusal with
    /// `onProposalRefused(_:now:)`).
    public enum Proposal: Sendable, Equatable {
        /// A rate (0 pauses).
        case rate(Double)
        /// A seek to this media time.
        case seek(ItemTime)
        /// The queue's next item.
        case next
        /// The queue's previous item.
        case previous
    }

    /// What the shell carries out, in order.
    public enum Directive: Sendable, Equatable {
        /// Send mpv this request (entered in the machine's ledger already).
        case send(Request)
        /// Call `onWake(now:)` at this instant (replaces any earlier wake-up asked for).
        case wake(at: HostInstant)
        /// Complete the coordinator's command given under this identity.
        case complete(command: UInt64)
        /// Propose this to the group; a refusal comes back as `onProposalRefused(number, now:)`.
        case propose(Proposal, number: Int)
        /// Begin a `.stallRecovery` suspension: mpv buffers while the group plays.
        case beginStall
        /// End the stall's suspension: mpv has its cache again.
        case endStall
        /// Show these lines on mpv's screen.
        case show([String])
        /// Propose a person's change, made in mpv already, to the coordinator a program drives
        /// the player from (`forwardsPersonChanges`), as it is, with no hold.
        case forward(MpvRequestLedger.UserAction)
        /// The program's own seek under this identity (`onOwnSeek(to:id:now:)`) ended: mpv landed
        /// and shows a frame there (`landed`), or it did not within `landingTimeout`.
        case seekEnded(UInt64, landed: Bool)
    }

    /// A reading of mpv's position: the position (nil: mpv has none now), when it held (the
    /// round trip's midpoint) and how long the round trip took.
    public struct Reading: Sendable, Equatable {
        /// The position, or nil when mpv had none (seeking, no audio clock).
        public var position: ItemTime?
        /// When it held.
        public var at: HostInstant
        /// How long the IPC round trip took: the reading is good to half of it.
        public var roundTrip: TimeSpan

        /// A reading of `position` at `at`.
        public init(position: ItemTime?, at: HostInstant, roundTrip: TimeSpan = .zero) {
            self.position = position
            self.at = at
            self.roundTrip = roundTrip
        }
    }

    /// What mpv reported (a `property-change`, an event, a key bound in its window).
    public enum Report: Sendable, Equatable {
        /// `pause` changed.
        case pause(Bool)
        /// `speed` changed.
        case speed(Double)
        /// A seek landed (`playback-restart`).
        case playbackRestart
        /// `paused-for-cache` changed: mpv waits for its cache (a stream arriving too slowly).
        case pausedForCache(Bool)
        /// `eof-reached` changed.
        case endReached(Bool)
        /// A key bound in mpv's window was pressed.
        case key(Key)
    }

    /// A key bound in mpv's window, with the terminal's meaning: each is proposed to the group
    /// and takes effect in this mpv at the group's instant, as in every other participant.
    public enum Key: Sendable, Equatable {
        /// Play or pause.
        case togglePause
        /// Move by this much from the group's position.
        case seek(by: TimeSpan)
        /// The queue's next item.
        case next
        /// The queue's previous item.
        case previous
        /// The rate 0.1 lower.
        case slower
        /// The rate 0.1 higher.
        case faster
        /// The rate back to 1.
        case resetRate
    }

    /// A start on a timeline: media time `itemTime` at host instant `host` (the latency offset
    /// already taken off), at `rate`, for the command of `version`.
    struct Start: Sendable, Equatable {
        var itemTime: ItemTime
        var host: HostInstant
        var rate: Double
        var version: UInt64
        var again: Bool

        /// The timeline's position at `instant`.
        func target(at instant: HostInstant) -> ItemTime { itemTime + (instant - host) * rate }
    }

    /// What the machine is in the middle of, if anything.
    enum Operation: Sendable, Equatable {
        case none
        /// A far-off start: mpv plays on until the start must begin, at `begin`.
        case waitingToBegin(Start, begin: HostInstant)
        /// A seek sent for a start, waiting for it to land.
        case landing(Landing)
        /// A start waiting for the reading of the frame a pre-roll landed on, to start there.
        case awaitingPreroll(Start)
        /// Landed on `landed` (or a pre-roll's frame): reading whether mpv has its audio clock there.
        case checkingClock(Start, landed: ItemTime, skips: Int, prerolled: Bool)
        /// Lined up on `landed`: the unpause is due at `unpauseAt`.
        case awaitingUnpause(Start, landed: ItemTime, startAt: HostInstant, unpauseAt: HostInstant, clockless: Bool, prerolled: Bool)
        /// Unpaused at `unpausedAt`: the start's error is read at `readAt`.
        case learning(Start, landed: ItemTime, startAt: HostInstant, unpausedAt: HostInstant, readAt: HostInstant, learns: Bool)
        /// A pulse of speed trims a start's error until `until`.
        case trimming(rate: Double, until: HostInstant)
        /// A play of a timeline mpv may follow already: reading where it is.
        case checkingPlay(PlayCommand)
        /// A pause due at `at` (the latency offset taken off), then a seek to `itemTime` if needed.
        case pausing(itemTime: ItemTime, at: HostInstant)
        /// Paused: reading where mpv is, to seek to `target` unless it is within `tolerance`.
        case checkingPosition(target: ItemTime, tolerance: TimeSpan, completion: UInt64?, prerolls: Bool)
        /// Paused: a seek to `target` sent, waiting for it to land.
        case seekingPaused(target: ItemTime, sentAt: HostInstant, restarts: Int, completion: UInt64?, prerolls: Bool)
        /// A command for another item this participant holds: mpv loads it, then the command.
        case loading(identifier: String, command: PlaybackCommand, id: UInt64)
    }

    /// A start's seek on its way: aimed at `aimed`, sent at `sentAt` after `restarts` restarts,
    /// the `skips`th made for an audio clock; the landed frame first read at `firstRead`, read
    /// again at `retryAt` while it is still an earlier seek's.
    struct Landing: Sendable, Equatable {
        var start: Start
        var aimed: ItemTime
        var sentAt: HostInstant
        var restarts: Int
        var skips: Int
        var firstRead: HostInstant?
        var retryAt: HostInstant?
        var lastFrame: ItemTime?
    }

    /// A person's proposal the player holds for: commands of `version` or older are stale, and the
    /// corrections wait, until the group answers or `until`.
    struct Hold: Sendable, Equatable {
        var version: UInt64
        var until: HostInstant
        var number: Int
        /// What was proposed: a refusal rejoins the group's timeline for a seek or a speed.
        var rejoinsOnRefusal: Bool
    }

    /// What the machine decides with.
    public let configuration: Configuration
    /// What the machine did so far.
    public internal(set) var statistics = MpvStatistics()
    /// The item mpv has loaded.
    public internal(set) var item: Item
    /// Whether mpv is paused, as far as the machine knows: true from the moment a pause is sent,
    /// and what mpv reports when a person changed it or it stopped at the end.
    public internal(set) var paused: Bool
    /// The speed last asked of mpv.
    public internal(set) var requestedSpeed: Double
    /// The rate of the last play command carried out; 0 once paused.
    public internal(set) var groupRate: Double = 0
    /// Whether this participant is suspended for mpv's buffering.
    public internal(set) var isStalled = false
    /// How much earlier than the group's timeline mpv plays (see `MpvPlayer.latencyOffset`).
    public var latencyOffset = TimeSpan.zero
    /// The identifiers of the items this participant holds, which a group's command may load.
    public var availableItems: Set<String> = []
    /// The items that failed to load for the group: not tried again until given again.
    public var failedItems: Set<String> = []
    /// Whether a program drives the player from a coordinator of its own, which applies every
    /// change as it arrives: a person's change is then forwarded as it is (`Directive.forward`),
    /// mpv left where the person put it.
    public var forwardsPersonChanges = false
    /// mpv's `audio-pitch-correction` as last set; nil when unknown.
    public var correctsPitch: Bool?

    var ledger: MpvRequestLedger
    var policy: CorrectionPolicy
    var operation = Operation.none
    /// Bumped whenever `operation` is replaced, so that a reading asked for an older one is ignored.
    var operationSerial: UInt64 = 0
    var reads: [UInt64: (purpose: ReadPurpose, serial: UInt64)] = [:]
    var nextRead: UInt64 = 1
    var latestVersion: UInt64 = 0
    var followedVersion: UInt64?
    /// The group's timeline as the last play or pause command gave it (not offset).
    var timeline: (itemTime: ItemTime, host: HostInstant, rate: Double)?
    /// The last play command, to rejoin.
    var lastPlay: PlayCommand?
    var hold: Hold?
    /// mpv is paused for a person's proposal (a seek or a change of speed while the group plays),
    /// and plays on at this instant if the group has not answered by then.
    var pausedForProposal: HostInstant?
    var proposals = 0
    /// How long a seek takes to land, as measured.
    public internal(set) var seekLead = TimeSpan.milliseconds(40)
    /// How long after the unpause mpv's position starts moving, as measured.
    public internal(set) var startLatency = TimeSpan.microseconds(300)
    /// How far a change of speed moves mpv's audio clock per unit of change, as measured.
    public internal(set) var outputLag = TimeSpan.milliseconds(375)
    /// `playback-restart`s seen.
    var restarts = 0
    /// The frame a pre-roll landed on, while no restart came since (`restarts` then); not
    /// `known` while only its target is (the landing's reading is on its way).
    var prerolled: (frame: ItemTime, restarts: Int, known: Bool)?
    var settleUntil = HostInstant.distantPast
    var nextTick: HostInstant?
    var scheduledWake: HostInstant?
    var pausedForCache = false
    /// The program's own seeks not yet ended, oldest first.
    var ownSeeks: [OwnSeek] = []
    /// A load of another item put off until a load's lead before its command's instant, while
    /// mpv plays the current item on; its command is completed already.
    var deferredLoad: DeferredLoad?
    /// When the last load for the group was sent, until it is loaded.
    var loadSentAt: HostInstant?
    /// How long the last load for the group took, from its send to the item loaded.
    var lastLoadTook = TimeSpan.zero

    /// A group's command for another item, to be carried out by loading that item `at`.
    struct DeferredLoad: Sendable, Equatable {
        var identifier: String
        var command: PlaybackCommand
        var id: UInt64
        var at: HostInstant
    }

    /// A seek of the program's own on its way to `target`: sent at `sentAt`, after `restarts`
    /// restarts; `restarted` once mpv restarted somewhere else since.
    struct OwnSeek: Sendable, Equatable {
        var id: UInt64
        var target: ItemTime
        var sentAt: HostInstant
        var restarts: Int
        var restarted: Bool
    }

    enum ReadPurpose: Sendable, Equatable {
        case restart(at: HostInstant)
        case landing
        case audioClock
        case learnStart
        case correction
        case lagAfterChange(before: Reading, changedAt: HostInstant, old: Double, new: Double)
        case checkPlay
        case checkPosition
        case prerollClock
    }

    /// A machine for an mpv that has `item` loaded, `paused` at `speed`, at `now` (loading the
    /// file was a seek of Tandem's, whose report may still come).
    public init(configuration: Configuration = Configuration(), item: Item, paused: Bool, speed: Double, now: HostInstant) {
        self.configuration = configuration
        self.item = item
        self.paused = paused
        requestedSpeed = speed
        ledger = MpvRequestLedger(paused: paused, speed: speed)
        ledger.requestSeek(to: .zero, at: now)
        policy = item.hasAudio ? configuration.policy : configuration.soundlessPolicy
        availableItems = [item.identifier]
    }

    /// The correction policy in force for the item.
    var itemPolicy: CorrectionPolicy { item.hasAudio ? configuration.policy : configuration.soundlessPolicy }

    /// Whether a command of `version` is still the one to carry out.
    func isCurrent(_ version: UInt64) -> Bool { latestVersion == version && hold == nil }

    /// The group's position at `instant`, if it has a timeline (not offset).
    public func groupPosition(at instant: HostInstant) -> ItemTime? {
        guard let timeline else { return nil }
        return timeline.itemTime + (instant - timeline.host) * timeline.rate
    }

    // MARK: The coordinator's commands

    /// The coordinator issued `command`, to be completed under `id`: carried out from now on,
    /// superseding what the machine was doing for an older timeline version. A seek in
    /// anticipation of playback completes once mpv has landed on it (a pre-roll), unless it
    /// answers a person's change in this mpv (mpv is where the person put it); every other
    /// command completes at once, so that the coordinator never waits for mpv's start.
    public mutating func onCommand(_ command: PlaybackCommand, id: UInt64, now: HostInstant) -> [Directive] {
        latestVersion = command.version
        if let expected = command.expectedCurrentItemIdentifier, expected != item.identifier {
            // Another item: loaded first if this participant holds it, else stale.
            guard availableItems.contains(expected), !failedItems.contains(expected) else { return finish([.complete(command: id)], now) }
            // Loading it already: the newer command waits for it in place of the older one.
            if case .loading(expected, _, let older) = operation {
                replace(with: .loading(identifier: expected, command: command, id: id))
                return finish([.complete(command: older)], now)
            }
            // Playing on, with time to spare before the command's instant: the load waits
            // until a load's lead before it, so that mpv shows the current item to its end.
            if let instant = Self.instant(of: command), !paused, groupRate > 0, instant - loadLead > now {
                deferredLoad = DeferredLoad(identifier: expected, command: command, id: id, at: instant - loadLead)
                return finish([.complete(command: id)], now)
            }
            deferredLoad = nil
            return finish(beginLoad(expected, command: command, id: id, now: now), now)
        }
        deferredLoad = nil
        return finish(carryOut(command, id: id, now: now), now)
    }

    /// Pauses mpv and loads `identifier`, whose `command` (under `id`) is carried out once it is
    /// loaded. The group's command says when to play: until then mpv shows the new item still.
    mutating func beginLoad(_ identifier: String, command: PlaybackCommand, id: UInt64, now: HostInstant) -> [Directive] {
        let pausing = pause(now: now)
        replace(with: .loading(identifier: identifier, command: command, id: id))
        ledger.requestSeek(to: .zero, at: now)
        settleUntil = now + .seconds(2)
        loadSentAt = now
        return pausing + [.send(.load(identifier: identifier))]
    }

    /// The host instant a command takes effect: a play's or a pause's, or, for a seek or a
    /// buffering command, its due date (the instant of the play or pause it comes ahead of).
    static func instant(of command: PlaybackCommand) -> HostInstant? {
        switch command {
        case .play(let play): play.hostTime
        case .pause(let pause): pause.hostTime
        case .seek(let seek): seek.completionDueDate
        case .buffer: nil
        }
    }

    /// How long before a command's instant mpv loads another item: `itemLoadLead`, or twice the
    /// last load's time when that is longer, at most `itemLoadLeadLimit`.
    var loadLead: TimeSpan {
        min(configuration.itemLoadLeadLimit, max(configuration.itemLoadLead, lastLoadTook * 2))
    }

    mutating func carryOut(_ command: PlaybackCommand, id: UInt64, now: HostInstant) -> [Directive] {
        let answersPerson = hold != nil
        if let current = hold {
            // The group has not answered the person's change yet: this command predates it.
            if command.version <= current.version && now <= current.until { return [.complete(command: id)] }
            hold = nil
        }
        switch command {
        case .play(let play):
            timeline = (play.itemTime, play.hostTime, play.rate)
            lastPlay = play
            return [.complete(command: id)] + beginPlay(play, now: now)
        case .pause(let pause):
            timeline = (pause.itemTime, pause.hostTime, 0)
            replace(with: .pausing(itemTime: pause.itemTime, at: pause.hostTime - latencyOffset))
            return [.complete(command: id)] + step(now: now)
        case .seek(let seek) where seek.shouldBufferInAnticipationOfPlayback:
            // Answering a change this mpv's person made (its hold just answered): mpv plays on
            // from where the person put it and seeks as it starts.
            if answersPerson { return [.complete(command: id)] }
            return seekWhilePaused(to: seek.itemTime, tolerance: configuration.landingTolerance, completion: id, prerolls: true, now: now)
        case .seek(let seek):
            return [.complete(command: id)] + seekWhilePaused(to: seek.itemTime, tolerance: configuration.pauseTolerance, completion: nil,
                                                              prerolls: false, now: now)
        case .buffer(let buffer):
            return [.complete(command: id)] + seekWhilePaused(to: buffer.itemTime, tolerance: configuration.pauseTolerance, completion: nil,
                                                              prerolls: false, now: now)
        }
    }

    /// A play: mpv already playing at the group's rate close to the timeline is the corrections'
    /// (within the seek threshold for a re-issue of the timeline it follows, within `trimLimit`
    /// for a new one); anything else is a start afresh.
    mutating func beginPlay(_ play: PlayCommand, now: HostInstant) -> [Directive] {
        if !paused, groupRate > 0, abs(play.rate - groupRate) <= configuration.sameRateTolerance * groupRate {
            // A start of this timeline under way goes on: the re-issue only re-maps it.
            if case .checkingPlay = operation { return [] }
            replace(with: .checkingPlay(play))
            return [read(positionProperty, .checkPlay)]
        }
        if operationVersion == play.version, play.rate == groupRate { return [] }
        groupRate = play.rate
        return beginStart(Start(itemTime: play.itemTime, host: play.hostTime - latencyOffset, rate: play.rate, version: play.version,
                                again: true), now: now)
    }

    /// The version of the start under way, if one is.
    var operationVersion: UInt64? {
        switch operation {
        case .landing(let landing): landing.start.version
        case .waitingToBegin(let start, _), .awaitingPreroll(let start), .checkingClock(let start, _, _, _),
             .awaitingUnpause(let start, _, _, _, _, _), .learning(let start, _, _, _, _, _): start.version
        default: nil
        }
    }

    /// Moves a paused mpv to `target` unless within `tolerance` of it (a pause's seek, the group's
    /// seek while paused, a pre-roll, which completes `completion` once there).
    mutating func seekWhilePaused(to target: ItemTime, tolerance: TimeSpan, completion: UInt64?, prerolls: Bool,
                                  now: HostInstant) -> [Directive] {
        groupRate = 0
        pausedForProposal = nil
        var directives: [Directive] = []
        if !paused { directives += pause(now: now) }
        replace(with: .checkingPosition(target: target, tolerance: tolerance, completion: completion, prerolls: prerolls))
        return directives + [read(.framePosition, .checkPosition)]
    }

    // MARK: Requests

    /// Replaces the operation under way; readings asked for the old one are ignored.
    mutating func replace(with next: Operation) {
        operation = next
        operationSerial &+= 1
    }

    /// A reading of `property` for `purpose`.
    mutating func read(_ property: Property, _ purpose: ReadPurpose) -> Directive {
        let id = nextRead
        nextRead += 1
        reads[id] = (purpose, operationSerial)
        return .send(.read(id: id, property))
    }

    /// Pauses mpv unless it is paused already.
    mutating func pause(now: HostInstant) -> [Directive] {
        guard !paused else { return [] }
        paused = true
        ledger.requestPause(true, at: now)
        return [.send(.pause(true))]
    }

    /// Unpauses mpv unless it plays already (taken as moving once sent: the shell sends at once).
    mutating func unpause(now: HostInstant) -> [Directive] {
        guard paused else { return [] }
        paused = false
        pausedForProposal = nil
        ledger.requestPause(false, at: now)
        return [.send(.pause(false))]
    }

    /// Sets mpv's speed (to four decimals) unless it was last asked for that.
    mutating func setSpeed(_ speed: Double, now: HostInstant) -> [Directive] {
        let speed = (speed * 10_000).rounded() / 10_000
        guard abs(requestedSpeed - speed) > 0.000_05 || abs(ledger.speed - speed) > 0.000_05 else { return [] }
        requestedSpeed = speed
        ledger.requestSpeed(speed, at: now)
        return [.send(.speed(speed))]
    }

    /// Seeks mpv exactly to `target`, within the item (not past its last frame: mpv would land
    /// there, far from the target, and the landing would be taken for a person's seek).
    mutating func seek(to target: ItemTime, now: HostInstant) -> (Directive, ItemTime) {
        let last = item.duration.map { ItemTime.zero + $0 - item.frameDuration } ?? .distantFuture
        let target = max(ItemTime.zero, min(target, last))
        ledger.requestSeek(to: target, at: now)
        settleUntil = now + .seconds(2)
        return (.send(.seek(target)), target)
    }

    // MARK: Waking

    /// The wake-up asked for came (or any later instant): whatever is due is done.
    public mutating func onWake(now: HostInstant) -> [Directive] {
        scheduledWake = nil
        return finish(step(now: now), now)
    }

    /// Appends the wake-up the machine needs next, when it is not the one asked for already.
    mutating func finish(_ directives: [Directive], _ now: HostInstant) -> [Directive] {
        var directives = directives
        directives += step(now: now)
        // The corrections' clock runs while the group plays.
        if groupRate > 0, nextTick == nil { nextTick = now + configuration.correctionInterval }
        if groupRate <= 0 { nextTick = nil }
        let ownSeekDue = ownSeeks.map { $0.sentAt + configuration.landingTimeout }.min()
        let next = [operationDue, nextTick, pausedForProposal, hold?.until, ownSeekDue, deferredLoad?.at].compactMap { $0 }.min()
        if let next, next != scheduledWake {
            scheduledWake = next
            directives.append(.wake(at: next))
        }
        return directives
    }

    /// When the operation under way wants to be woken.
    var operationDue: HostInstant? {
        switch operation {
        case .waitingToBegin(_, let begin): begin
        case .landing(let landing):
            [landing.retryAt, landing.firstRead.map { $0 + configuration.landingReadLimit }, landing.sentAt + configuration.landingTimeout]
                .compactMap { $0 }.min()
        case .awaitingUnpause(_, _, _, let unpauseAt, _, _): unpauseAt
        case .learning(_, _, _, _, let readAt, _): readAt
        case .trimming(_, let until): until
        case .pausing(_, let at): at
        case .seekingPaused(_, let sentAt, _, _, _): sentAt + configuration.landingTimeout
        default: nil
        }
    }

    /// Does what is due at `now`.
    mutating func step(now: HostInstant) -> [Directive] {
        var directives: [Directive] = []
        if let current = hold, now > current.until { hold = nil }
        if let releaseAt = pausedForProposal, now >= releaseAt {
            // Unanswered: mpv plays on from where the person put it (the hold stays).
            pausedForProposal = nil
            if hold != nil, paused { directives += unpause(now: now) }
        }
        directives += stepOperation(now: now)
        if let load = deferredLoad, now >= load.at {
            deferredLoad = nil
            directives += beginLoad(load.identifier, command: load.command, id: load.id, now: now)
        }
        // Not landed in time: ended, so that the program's request returns (or fails, if mpv
        // never restarted) rather than waits on.
        let overdue = ownSeeks.filter { now >= $0.sentAt + configuration.landingTimeout }
        ownSeeks.removeAll { now >= $0.sentAt + configuration.landingTimeout }
        directives += overdue.map { .seekEnded($0.id, landed: $0.restarted) }
        if let tick = nextTick, now >= tick {
            nextTick = now + configuration.correctionInterval
            if case .none = operation, groupRate > 0, !paused, hold == nil, !isStalled, now >= settleUntil {
                directives.append(read(positionProperty, .correction))
            }
        }
        return directives
    }

    mutating func stepOperation(now: HostInstant) -> [Directive] {
        guard let due = operationDue, now >= due else { return [] }
        switch operation {
        case .waitingToBegin(let start, _):
            return lineUp(start, now: now)
        case .landing(var landing):
            let limit = [landing.firstRead.map { $0 + configuration.landingReadLimit }, landing.sentAt + configuration.landingTimeout]
                .compactMap { $0 }.min() ?? now
            if now < limit, landing.retryAt != nil {
                landing.retryAt = nil
                operation = .landing(landing)
                return [read(.framePosition, .landing)]
            }
            // Not landed in time, or still short of the target: the last frame read is taken.
            return landed(landing, on: landing.lastFrame ?? landing.aimed, now: now)
        case .awaitingUnpause(let start, let landed, let startAt, _, let clockless, let prerolled):
            return unpauseForStart(start, landed: landed, startAt: startAt, clockless: clockless, prerolled: prerolled, now: now)
        case .learning(let start, let landed, let startAt, let unpausedAt, _, let learns):
            replace(with: .learning(start, landed: landed, startAt: startAt, unpausedAt: unpausedAt, readAt: .distantFuture, learns: learns))
            return [read(.audioClock, .learnStart)]
        case .trimming(let rate, _):
            replace(with: .none)
            return paused ? [] : setSpeed(rate, now: now)
        case .pausing(let itemTime, _):
            groupRate = 0
            pausedForProposal = nil
            let directives = pause(now: now)
            replace(with: .checkingPosition(target: itemTime, tolerance: configuration.pauseTolerance, completion: nil, prerolls: false))
            return directives + [read(.framePosition, .checkPosition)]
        case .seekingPaused(_, _, _, let completion, _):
            replace(with: .none)
            return completion.map { [.complete(command: $0)] } ?? []
        default:
            return []
        }
    }
}

extension TimeSpan {
    /// A span of `nanoseconds`.
    static func nanoseconds(_ nanoseconds: Int64) -> TimeSpan { TimeSpan(nanoseconds: nanoseconds) }
}
