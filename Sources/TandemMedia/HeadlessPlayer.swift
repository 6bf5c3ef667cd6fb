import Foundation
import Tandem
import TandemClock
import TandemPlayback
import TandemMediaTypes

/// A player without a window: it decodes a media item with FFmpeg on a thread of its own and
/// presents each frame to its sinks at the local monotonic instant that its timeline gives.
///
/// Drive it with `play()`, `pause()`, `seek(to:)`, `rate` and `replaceCurrentItem(with:)`, or hand it
/// whole timelines with `setTimeline(_:)`, as a playback coordinator does: a timeline anchored in
/// the future is a change scheduled for that instant, and the player switches at exactly that
/// instant.
///
/// ```swift
/// let log = try PresentationLog(path: "presented.jsonl")
/// let player = try HeadlessPlayer(url: "movie.mp4", videoSinks: [log])
/// player.play()
/// player.waitUntilEnded(timeout: 60)
/// ```
///
/// **Coordinated**, in the SharePlay manner, the same calls are proposed to the group:
///
/// ```swift
/// player.playbackCoordinator.coordinateWithSession(session)
/// player.play()   // every participant starts playing, at one instant
/// ```
///
/// `play()`, `pause()`, `seek(to:)` and `rate` are AVPlayer's: they do not throw, and a failure is
/// published as `error`; `play(rate:)`, `setRate(_:)` and `setPosition(_:)` are their throwing
/// forms. While `playbackCoordinator.isCoordinating`, these and `replaceCurrentItem(with:)` ask
/// the group (`proposeRateChange(to:)`, `proposeSeek(to:)`, `transitionToItem(identifier:at:)`),
/// and the player changes when the group's command reaches it, at the instant the group chose;
/// the variants that name a local instant (`at:`) throw `MediaError.notWhileCoordinated`. `setTimeline(_:)`, `prepare(_:at:)`,
/// `switchToPreparedItem(timeline:)` and `replaceCurrentItem(with:timeline:)` are the low-level
/// path the coordinator's delegate uses, and never go to the group. Uncoordinated, every call
/// changes this player alone.
///
/// **Items**: a file, an `http(s)` URL or a seekable byte source (`PlaybackItem`). The next item
/// can be opened and decoded ahead (`prepare(_:at:)`) while the current one plays, and switched to
/// at an instant (`switchToPreparedItem(timeline:)`), its first frame presented on time.
///
/// **Stalls**: `setStallHandler(_:)` hears when the player cannot present on time and when it can
/// again (see there for the rule).
///
/// **Sound**: with `Options.audioOutput = .pulse` the player plays its sound through a PulseAudio
/// (or PipeWire) server, pulled by the server and timed on the same timeline as the pictures,
/// to the sample at the output (`AudioPlayoutCore` says how); `volume`, `isMuted` and
/// `soundStatistics` while it plays. Without a server it says so in one line and plays on
/// silently. The audio sinks hear the decoded sound either way.
///
/// Why unchecked: the `@Published` wrappers' storage is a `var`, as Swift requires of every
/// property wrapper, though it is never reassigned (the wrapper's setter is `nonmutating` and its
/// storage locks its own state); marked plainly `Sendable`, the class is refused for that storage.
/// Every other stored property is a `let` of a `Sendable` type (the engine, the coordination,
/// the stalls and the sound, each guarding its own state).
public final class HeadlessPlayer: @unchecked Sendable {
    /// What the player needs besides the item.
    public struct Options: Sendable {
        /// The item's identifier in presentations and logs, for `init(url:)`; by default the
        /// file's name. (An item made with `init(item:)` has its own.)
        public var itemIdentifier: String?
        /// Whether to decode video.
        public var decodeVideo = true
        /// Whether to decode audio.
        public var decodeAudio = true
        /// Video decoding threads; 0 lets FFmpeg choose.
        public var threads = 0
        /// Frames to decode ahead.
        public var videoQueueFrames = 8
        /// How far ahead a local `seek` while playing is scheduled, so that the decoder can land
        /// on the target before it is due and nothing is shown late.
        public var seekLead = TimeSpan.milliseconds(80)
        /// How long before each frame's instant the presentation thread stops sleeping and
        /// spins on the clock, to present within microseconds; 0 sleeps all the way (less CPU,
        /// later wake-ups).
        public var spinAhead = TimeSpan.microseconds(200)
        /// Whether the presentation thread and the sound output's thread ask for a real-time
        /// (SCHED_FIFO) priority, so that other busy processes do not delay the presentation's
        /// wake-ups or starve the sound output into an underrun. It needs the privilege to (root,
        /// or `CAP_SYS_NICE`, or an `rtprio` limit); without it the threads run normally.
        public var realtimePresentation = true
        /// Whether the processors are kept awake over the last 2 ms before each frame's instant
        /// once a wait has been seen to wake late (more than 0.3 ms; for five minutes after the
        /// last such wake). On a virtual machine a halted processor wakes 0.7 to 3 ms late about
        /// once in a hundred waits, and so would a frame due on it; this process's idle-priority
        /// threads fill that time instead. For a lightly loaded machine: with eight players
        /// decoding on two processors it made the worst frame after a seek 15 to 30 ms apart
        /// (0.4 to 9.6 ms without), for a cause not found, so it is off by default.
        public var wakeGuard = false
        /// For benchmarks: the decoding thread takes this many times as long per frame as it
        /// needs (it waits after each in proportion), to make a slow participant. 1, the default,
        /// decodes at full speed; values below 1 or not finite are refused.
        public var decodeThrottle = 1.0
        /// How much earlier than the timeline gives it each frame is presented, in nanoseconds,
        /// for an output that lags (a display's or a capture's latency): positive presents
        /// earlier, negative later, within ±`HeadlessPlayer.maximumLatencyOffset`; 0 by default.
        /// It is this player's alone: nothing of it reaches the group. The sound output's
        /// instants move with the pictures' (as do the audio sinks').
        public var latencyOffset: Int64 = 0

        /// Where the player's sound plays: `.none` (the default: silent, as in tests and
        /// benchmarks that do not ask for sound) or `.pulse`, a PulseAudio (or PipeWire) server.
        public var audioOutput: AudioOutputKind = .none
        /// The sound server for `.pulse` (`unix:/path/native`, `tcp:host`); nil lets libpulse
        /// find it (`PULSE_SERVER`, the session's own). The client never starts one.
        public var audioServer: String?
        /// The sink to play on, by name (`pactl list short sinks`); nil plays on the server's default.
        public var audioDevice: String?
        /// The sound's volume, in percent of its full level: 0 to 150 (above 100 amplifies).
        public var volume = 100
        /// Whether the sound starts muted.
        public var muted = false
        /// The latency asked of the sound server: how far ahead of the output sound is written.
        public var audioLatency = TimeSpan.milliseconds(50)
        /// Where the sound output logs its writes, snaps, underruns and latency (`AudioLog`'s
        /// JSON lines), if anywhere.
        public var audioLog: String?
        /// Hears the player's one-line notices about its sound (no server reachable, say); by
        /// default they go to standard error.
        public var audioNotice: (@Sendable (String) -> Void)?

        /// The defaults: video and audio, FFmpeg's choice of threads, 8 frames ahead.
        public init() {}
    }

    /// Coordinates this player with a group: `player.playbackCoordinator.coordinateWithSession(session)`
    /// and the player presents frames straight from the group's shared timeline, and proposes
    /// its own transport to the group.
    public let playbackCoordinator: PlaybackCoordinator
    /// The last transport request that failed, as AVPlayer's `error`: `play()`, `pause()`,
    /// `seek(to:)` and setting `rate` do not throw, and publish their failure here (a rate out
    /// of range, a change the group would refuse); `for await error in player.$error.values`
    /// hears each. nil until one fails.
    @Published public internal(set) var error: MediaError? = nil
    /// Whether the player plays, is paused, or waits to play, as AVPlayer's
    /// `timeControlStatus`: coordinated, waiting while the group waits (for a suspension, for
    /// the others' pre-roll) or while this player stalls; `$timeControlStatus.values` hears each
    /// change, refreshed as the player is given a timeline and as it stalls and recovers.
    @Published public internal(set) var timeControlStatus: TimeControlStatus = .paused
    /// Why the player waits to play (`.waitingForCoordinatedPlayback`, `.toMinimizeStalls`), as
    /// AVPlayer's `reasonForWaitingToPlay`; nil unless `timeControlStatus` is
    /// `.waitingToPlayAtSpecifiedRate`.
    @Published public internal(set) var reasonForWaitingToPlay: WaitingReason? = nil
    let options: Options
    let engine: PlaybackEngine
    /// The coordinator's delegate (it holds its delegate weakly).
    private let coordination: HeadlessPlayerCoordination
    /// Suspends this participant while the player stalls, and calls the program's stall handler.
    let stalls = StallSuspender()
    /// The sound output, when there is one.
    let sound: HeadlessPlayerSound

    /// Opens `url` and starts decoding, paused at the start (or following `timeline`).
    ///
    /// - Parameters:
    ///   - url: a path (only local files are opened, as `MediaFile(url:)` says), or any URL
    ///     that libavformat opens.
    ///   - videoSinks: where frames go, in order, at their instants.
    ///   - audioSinks: where sound goes; a `NullAudioSink` is added when none is given.
    ///   - timeline: the timeline to follow from the start; by default paused at the first frame.
    public convenience init(url: String, options: Options = Options(), videoSinks: [any VideoSink] = [],
                            audioSinks: [any AudioSink] = [], timeline: PresentationTimeline? = nil) throws(MediaError) {
        let identifier = options.itemIdentifier ?? URL(fileURLWithPath: url).lastPathComponent
        let web = MediaFile.isURL(url) ? URL(string: url).flatMap { try? PlaybackItem(url: $0, identifier: identifier) } : nil
        let item = web ?? PlaybackItem(file: url, identifier: identifier)
        try self.init(item: item, file: MediaFile(url: url), options: options, videoSinks: videoSinks,
                      audioSinks: audioSinks, timeline: timeline)
    }

    /// Opens `item` and starts decoding, paused at the start (or following `timeline`).
    ///
    /// - Parameters:
    ///   - item: a file (only local files are opened), an `http(s)` URL (only `MediaFile.webProtocols`)
    ///     or a byte source; its identifier names it in presentations and to the group.
    ///   - videoSinks: where frames go, in order, at their instants.
    ///   - audioSinks: where sound goes; a `NullAudioSink` is added when none is given.
    ///   - timeline: the timeline to follow from the start; by default paused at the first frame.
    public convenience init(item: PlaybackItem, options: Options = Options(), videoSinks: [any VideoSink] = [],
                            audioSinks: [any AudioSink] = [], timeline: PresentationTimeline? = nil) throws(MediaError) {
        try self.init(item: item, file: MediaFile(item: item), options: options, videoSinks: videoSinks,
                      audioSinks: audioSinks, timeline: timeline)
    }

    private init(item: PlaybackItem, file: MediaFile, options: Options, videoSinks: [any VideoSink],
                 audioSinks: [any AudioSink], timeline: PresentationTimeline?) throws(MediaError) {
        guard options.decodeThrottle.isFinite && options.decodeThrottle >= 1 else {
            throw MediaError.invalidArgument("decodeThrottle", "\(options.decodeThrottle) is not a factor of 1 or more")
        }
        let decoder = try HeadlessPlayer.decoder(for: file, options: options)
        let start = max(ItemTime.zero + .seconds(file.info.startTime ?? 0), .zero)
        let initial = timeline ?? .paused(at: start, from: .now())
        guard initial.isValid else { throw MediaError.invalidArgument("rate", "\(initial.rate) is outside 0.25...4") }
        self.options = options
        var limits = PlaybackEngine.Limits()
        limits.videoFrames = max(2, options.videoQueueFrames)
        limits.spinLead = max(.zero, options.spinAhead)
        limits.realtime = options.realtimePresentation
        limits.wakeGuard = options.wakeGuard
        limits.decodeThrottle = options.decodeThrottle
        limits.latencyOffset = TimeSpan(nanoseconds: HeadlessPlayer.clampedLatencyOffset(options.latencyOffset))
        let playout = try HeadlessPlayer.playout(options: options)
        // The output renders about its latency ahead, a write at a time: twice the latency of
        // sound decoded ahead lets the first write of a play find its sound there (within what
        // the decoder buffers).
        if playout != nil { limits.soundAhead = min(options.audioLatency * 2, limits.audioDuration) }
        engine = PlaybackEngine(
            decoder: decoder, item: item, timeline: initial, limits: limits,
            videoSinks: videoSinks, audioSinks: audioSinks.isEmpty ? [NullAudioSink()] : audioSinks,
            audioStore: playout?.store, startPosition: start
        )
        sound = HeadlessPlayerSound(playout: playout, options: options, engine: engine)
        coordination = HeadlessPlayerCoordination(itemIdentifier: item.identifier)
        playbackCoordinator = PlaybackCoordinator(delegate: coordination)
        coordination.player = self
        let stalls = stalls
        engine.lock.withLock {
            engine.stallHandler = { [weak self] stall in
                guard let self else { return }
                stalls.handle(stall, player: self)
            }
        }
    }

    static func decoder(for file: MediaFile, options: Options) throws(MediaError) -> MediaDecoder {
        try MediaDecoder(file: file, decodeVideo: options.decodeVideo, decodeAudio: options.decodeAudio, threads: options.threads)
    }

    deinit {
        sound.close()
        engine.stop()
    }

    /// Stops decoding, presenting and the sound, and waits for the threads. The player cannot restart.
    public func close() {
        sound.close()
        engine.stop()
    }

    // MARK: The item

    /// The item being presented: the one the player opened, or the last one it switched to.
    public var currentItem: PlaybackItem {
        engine.lock.withLock { engine.currentItem }
    }

    /// The current item's identifier in presentations and logs.
    public var itemIdentifier: String {
        engine.lock.withLock { engine.item }
    }

    /// What the current item holds.
    public var info: MediaInfo {
        engine.lock.withLock { engine.info }
    }

    // MARK: Reading

    /// Refreshes `timeControlStatus` and `reasonForWaitingToPlay` from the group and the player.
    func refreshTimeControl() {
        let (status, reason) = playbackCoordinator.timeControl(playerRate: timeline.rate, stalled: isStalled)
        // The reason first: whoever hears the status change reads the reason that goes with it.
        if reasonForWaitingToPlay != reason { reasonForWaitingToPlay = reason }
        if timeControlStatus != status { timeControlStatus = status }
    }

    /// The newest timeline: the one in force, or the change scheduled next.
    public var timeline: PresentationTimeline {
        engine.lock.withLock { engine.schedule.newest }
    }

    /// The item time at host instant `hostTime` (by default now), per the timeline in force then.
    public func itemTime(atHostTime hostTime: HostInstant = .now()) -> ItemTime {
        engine.lock.withLock {
            var schedule = engine.schedule
            schedule.advance(to: hostTime)
            return schedule.current.timeline.itemTime(atHostTime: hostTime)
        }
    }

    /// The largest latency offset either way: 1 s.
    public static let maximumLatencyOffset: Int64 = 1_000_000_000

    /// How much earlier than the timeline gives it each frame is presented, in nanoseconds
    /// (`Options.latencyOffset`); set it at any time, clamped to ±`maximumLatencyOffset`, and
    /// the next frame is presented by it. The timeline and `itemTime(atHostTime:)` stay the
    /// group's: only the presentation instants (and the presentation log's) move.
    public var latencyOffset: Int64 {
        get { engine.lock.withLock { engine.latencyOffset.nanoseconds } }
        set {
            engine.lock.withLock {
                engine.latencyOffset = TimeSpan(nanoseconds: HeadlessPlayer.clampedLatencyOffset(newValue))
                engine.scheduleChanged.broadcast()
            }
        }
    }

    static func clampedLatencyOffset(_ offset: Int64) -> Int64 {
        min(max(offset, -maximumLatencyOffset), maximumLatencyOffset)
    }

    /// What the player has done so far.
    public var statistics: PlaybackStatistics {
        engine.lock.withLock { engine.statistics }
    }

    /// Whether everything up to the end of the current item has been presented or dropped (and
    /// no change, such as a switch to a prepared item, is scheduled).
    public var hasEnded: Bool {
        engine.lock.withLock { engine.ended }
    }

    /// Adds a video sink; it receives frames presented from now on.
    public func addVideoSink(_ sink: any VideoSink) {
        engine.lock.withLock { engine.videoSinks.append(sink) }
    }

    /// Calls `handler` when the player stalls (it cannot present on time) and when it recovers,
    /// on the player's own threads (return quickly); replaces the handler set before.
    ///
    /// The rule (`StallDetector`), with hysteresis: a stall **begins**, only while a playing
    /// timeline is in force and after the first play (never while paused), when 3 frames in a row
    /// are presented more than a frame duration late or dropped as too late, or when no frame is
    /// decoded one frame duration after one fell due (the decoder or the source behind; not
    /// while a seek or a switch scheduled for later is pending). It **ends** when 4 frames (half
    /// the queue, at least 2) of the position in force are decoded ahead again, or decoding
    /// reached the end of the item: typically while the group waits for it.
    ///
    /// **Coordinated** (`playbackCoordinator.isCoordinating`), the player acts on its own stalls
    /// before calling `handler`: on `.began` it begins a `.stallRecovery` suspension through its
    /// coordinator (the group waits if that reason is in `suspensionReasonsThatTriggerWaiting`)
    /// and holds itself where it is so that its decoder gets ahead; on `.ended` it ends that
    /// suspension, and the coordinator brings it back onto the group's timeline. No program needs
    /// to suspend for a stall itself.
    public func setStallHandler(_ handler: @escaping @Sendable (PlayerStall) -> Void) {
        stalls.setHandler(handler)
    }

    /// Whether the newest position is decoded ahead (4 frames, or to the end of the item; with a
    /// sound output, its sound twice the output's latency ahead too), so that a play from it
    /// starts on time, pictures and sound: what a participant reports as pre-rolled.
    public var isReadyToPlay: Bool {
        engine.lock.withLock { engine.isReadyLocked }
    }

    /// Whether the prepared item is decoded ahead from where it will start (false with none).
    public var isPreparedItemReady: Bool {
        engine.lock.withLock { engine.isPreparedReadyLocked }
    }

    /// Blocks the calling thread until `isReadyToPlay` (or, with `preparedItem`, until
    /// `isPreparedItemReady`) or `timeout` seconds; returns whether it became so. Call it from a
    /// thread of your own, not from a task.
    @discardableResult
    public func waitUntilReady(preparedItem: Bool = false, timeout: Double) -> Bool {
        let deadline = HostInstant.now() + .seconds(timeout)
        return engine.lock.withLock {
            engine.waitLocked(until: deadline) { preparedItem ? engine.isPreparedReadyLocked : engine.isReadyLocked }
        }
    }

    /// Blocks the calling thread until the newest position's first two frames (and, with a sound
    /// output, its first sound) are decoded (all there is, at the end), until monotonic instant `deadline`, or until the player stops;
    /// returns whether they were. A coordinated seek's pre-roll waits here.
    @discardableResult
    func waitUntilPrerolled(deadline: HostInstant) -> Bool {
        engine.lock.withLock { engine.waitLocked(until: deadline) { engine.isPrerolledLocked } }
    }

    /// Whether the player is stalled: a `PlayerStall.began` not yet followed by `.ended`.
    public var isStalled: Bool {
        engine.lock.withLock { engine.stall.isStalled }
    }

    /// Blocks the calling thread until the current item has ended or `timeout` seconds have
    /// passed; returns whether it ended. Call it from a thread of your own, not from a task.
    @discardableResult
    public func waitUntilEnded(timeout: Double) -> Bool {
        let deadline = HostInstant.now() + .seconds(timeout)
        return engine.lock.withLock { engine.waitLocked(until: deadline) { engine.ended } }
    }
}

extension HeadlessPlayer {
    /// `itemTime(atHostTime:)` in bare nanoseconds.
    @available(*, deprecated, renamed: "itemTime(atHostTime:)", message: "pass a HostInstant; the result is an ItemTime")
    public func mediaTime(atLocalTime localTime: Int64 = HostInstant.now().nanoseconds) -> Int64 {
        itemTime(atHostTime: HostInstant(nanoseconds: localTime)).nanoseconds
    }
}

extension HeadlessPlayer.Options {
    /// `seekLead` in bare nanoseconds.
    @available(*, deprecated, renamed: "seekLead", message: "set seekLead, a TimeSpan")
    public var seekLeadTime: Int64 {
        get { seekLead.nanoseconds }
        set { seekLead = TimeSpan(nanoseconds: newValue) }
    }

    /// `spinAhead` in bare nanoseconds.
    @available(*, deprecated, renamed: "spinAhead", message: "set spinAhead, a TimeSpan")
    public var spinLead: Int64 {
        get { spinAhead.nanoseconds }
        set { spinAhead = TimeSpan(nanoseconds: newValue) }
    }
}
