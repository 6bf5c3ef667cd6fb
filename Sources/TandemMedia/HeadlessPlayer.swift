import Foundation
import TandemPlayback

/// A player without a window: it decodes a media item with FFmpeg on a thread of its own and
/// presents each frame to its sinks at the local monotonic instant that its timeline gives.
///
/// Drive it with `play`, `pause`, `seek`, `setRate` and `replaceCurrentItem(with:)`, or hand it
/// whole timelines with `setTimeline(_:)`, as a playback coordinator does: a timeline anchored in
/// the future is a change scheduled for that instant, and the player switches at exactly that
/// instant.
///
/// ```swift
/// let log = try PresentationLog(path: "presented.jsonl")
/// let player = try HeadlessPlayer(url: "movie.mp4", videoSinks: [log])
/// try player.play()
/// player.waitUntilEnded(timeout: 60)
/// ```
///
/// **Coordinated**, in the SharePlay manner, the same calls are proposed to the group:
///
/// ```swift
/// player.playbackCoordinator.coordinateWithSession(session)
/// try player.play()   // every participant starts playing, at one instant
/// ```
///
/// While `playbackCoordinator.isCoordinating`, `play()`, `pause()`, `seek(to:)`, `setRate(_:)` and
/// `replaceCurrentItem(with:)` ask the group (`coordinateRateChange(to:)`, `coordinateSeek(to:)`,
/// `transitionToItem(identifier:at:)`), and the player changes when the group's command reaches
/// it, at the instant the group chose; the variants that name a local instant (`at:`) throw
/// `MediaError.notWhileCoordinated`. `setTimeline(_:)`, `prepare(_:at:)`,
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
        public var seekLeadTime: Nanoseconds = 80_000_000
        /// How long before each frame's instant the presentation thread stops sleeping and
        /// spins on the clock, to present within microseconds; 0 sleeps all the way (less CPU,
        /// wake-ups typically 0.1 to 0.3 ms late).
        public var spinLead: Nanoseconds = 200_000
        /// Whether the presentation thread asks for a real-time (SCHED_FIFO) priority, so that
        /// other busy processes do not delay its wake-ups. It needs the privilege to (root, or
        /// `CAP_SYS_NICE`, or an `rtprio` limit); without it the thread runs normally.
        public var realtimePresentation = true
        /// How the player follows a group's timeline when coordinated: at each change's effective
        /// instant (`.scheduled`, the default), or, as a benchmarking baseline, when each change
        /// arrives (`.onReceipt`: no scheduling, no drift correction; see `TimelineFollowing`).
        public var following: TimelineFollowing = .scheduled
        /// For benchmarks: the decoding thread takes this many times as long per frame as it
        /// needs (it waits after each in proportion), to make a slow participant. 1, the default,
        /// decodes at full speed; values below 1 or not finite are refused.
        public var decodeThrottle = 1.0

        /// The defaults: video and audio, FFmpeg's choice of threads, 8 frames ahead.
        public init() {}
    }

    /// Coordinates this player with a group: `player.playbackCoordinator.coordinateWithSession(session)`
    /// and the player presents frames straight from the group's shared timeline, and proposes
    /// its own transport to the group.
    public let playbackCoordinator: PlaybackCoordinator
    private let options: Options
    private let engine: PlaybackEngine
    /// The coordinator's delegate (it holds its delegate weakly).
    private let coordination: HeadlessPlayerCoordination

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
        let start = MediaTime.nanoseconds(seconds: file.info.startTime ?? 0)
        let initial = timeline ?? .paused(at: max(start, 0), from: MonotonicClock.now())
        guard initial.isValid else { throw MediaError.invalidArgument("rate", "\(initial.rate) is outside 0.25...4") }
        self.options = options
        var limits = PlaybackEngine.Limits()
        limits.videoFrames = max(2, options.videoQueueFrames)
        limits.spinLead = max(0, options.spinLead)
        limits.realtime = options.realtimePresentation
        limits.decodeThrottle = options.decodeThrottle
        engine = PlaybackEngine(
            decoder: decoder, item: item, timeline: initial, limits: limits,
            videoSinks: videoSinks, audioSinks: audioSinks.isEmpty ? [NullAudioSink()] : audioSinks,
            startPosition: max(start, 0)
        )
        coordination = HeadlessPlayerCoordination(itemIdentifier: item.identifier, following: options.following)
        playbackCoordinator = PlaybackCoordinator(delegate: coordination)
        coordination.player = self
    }

    private static func decoder(for file: MediaFile, options: Options) throws(MediaError) -> MediaDecoder {
        try MediaDecoder(file: file, decodeVideo: options.decodeVideo, decodeAudio: options.decodeAudio, threads: options.threads)
    }

    deinit {
        engine.stop()
    }

    /// Stops decoding and presenting, and waits for both threads. The player cannot restart.
    public func close() {
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

    /// The item prepared to follow, if any (`prepare(_:at:)`).
    public var preparedItem: PlaybackItem? {
        engine.lock.withLock { engine.prepared?.item }
    }

    /// The item known by `identifier`: the current one, the prepared one, or one that
    /// `replaceCurrentItem(with:)` proposed to the group (so that the coordinator's delegate can
    /// open what the group switched to).
    public func item(withIdentifier identifier: String) -> PlaybackItem? {
        engine.lock.withLock {
            if engine.currentItem.identifier == identifier { return engine.currentItem }
            if let prepared = engine.prepared, prepared.item.identifier == identifier { return prepared.item }
            return engine.namedItems.last { $0.identifier == identifier }
        }
    }

    /// Opens `item` and decodes it ahead from media time `itemTime` (ns), while the current item
    /// plays on; `switchToPreparedItem(timeline:)` then switches to it at an instant, its first
    /// frames already decoded. Replaces an item prepared before.
    ///
    /// The item is opened on the calling thread (a file in milliseconds, a URL as fast as its
    /// server answers), so that an item that cannot be opened throws here; it is decoded on the
    /// player's decoding thread, after the current item's queue is full. The low-level path: it
    /// never goes to the group.
    public func prepare(_ item: PlaybackItem, at itemTime: Int64) throws(MediaError) {
        let file = try MediaFile(item: item)
        let decoder = try HeadlessPlayer.decoder(for: file, options: options)
        engine.lock.withLock { engine.prepareLocked(item: item, decoder: decoder, at: max(0, itemTime)) }
    }

    /// Switches to the prepared item at `timeline`'s anchor instant: from that instant frames
    /// come from it, following `timeline` (its first frame at the anchor, as tightly on time as
    /// any other), and nothing of the old item is presented after. At once if the anchor is not
    /// in the future. Throws when no item is prepared or the rate is invalid.
    ///
    /// A timeline scheduled later for an instant after the switch applies to the new item; one
    /// for the switch's instant or before it cancels the switch (the item stays prepared). The
    /// low-level path: it never goes to the group.
    public func switchToPreparedItem(timeline: PresentationTimeline) throws(MediaError) {
        guard timeline.isValid else { throw MediaError.invalidArgument("rate", "\(timeline.rate) is outside 0.25...4") }
        let switched = engine.lock.withLock { engine.switchToPreparedLocked(timeline, now: MonotonicClock.now()) }
        guard switched else {
            throw MediaError.invalidArgument("switchToPreparedItem", "no item is prepared; call prepare(_:at:) first")
        }
    }

    /// Opens `item` and switches to it at `timeline`'s anchor instant: `prepare` and
    /// `switchToPreparedItem` in one (the decoder has only until the anchor to get ahead). The
    /// low-level path: it never goes to the group.
    public func replaceCurrentItem(with item: PlaybackItem, timeline: PresentationTimeline) throws(MediaError) {
        guard timeline.isValid else { throw MediaError.invalidArgument("rate", "\(timeline.rate) is outside 0.25...4") }
        try prepare(item, at: timeline.anchorMediaTime)
        try switchToPreparedItem(timeline: timeline)
    }

    /// Replaces the current item with `item`, in the manner of AVPlayer's `replaceCurrentItem(with:)`:
    /// it starts at its beginning, playing if the player was (a moment ahead, `Options.seekLeadTime`,
    /// so that its first frame is on time).
    ///
    /// Coordinated, the change is proposed to the group (`transitionToItem(identifier:at:)`), and
    /// the player switches when the group's command comes; the item is remembered so that
    /// `item(withIdentifier:)` finds it then.
    public func replaceCurrentItem(with item: PlaybackItem) throws(MediaError) {
        if playbackCoordinator.isCoordinating {
            engine.lock.withLock {
                engine.namedItems.removeAll { $0.identifier == item.identifier }
                engine.namedItems.append(item)
                if engine.namedItems.count > HeadlessPlayer.namedItemLimit { engine.namedItems.removeFirst() }
            }
            try propose("switch to \(item.identifier)") { try playbackCoordinator.transitionToItem(identifier: item.identifier) }
            return
        }
        let file = try MediaFile(item: item)
        let decoder = try HeadlessPlayer.decoder(for: file, options: options)
        let start = max(0, MediaTime.nanoseconds(seconds: file.info.startTime ?? 0))
        let now = MonotonicClock.now()
        let rate = timeline.rate
        let next = PresentationTimeline(rate: rate, anchorMediaTime: start, anchorLocalTime: rate > 0 ? now + options.seekLeadTime : now)
        engine.lock.withLock {
            engine.prepareLocked(item: item, decoder: decoder, at: start)
            _ = engine.switchToPreparedLocked(next, now: now)
        }
    }

    /// How many items proposed by `replaceCurrentItem(with:)` the player remembers.
    static let namedItemLimit = 64

    // MARK: Reading

    /// The newest timeline: the one in force, or the change scheduled next.
    public var timeline: PresentationTimeline {
        engine.lock.withLock { engine.schedule.newest }
    }

    /// The media time at local instant `localTime` (by default now), per the timeline in force then.
    public func mediaTime(atLocalTime localTime: Nanoseconds = MonotonicClock.now()) -> Nanoseconds {
        engine.lock.withLock {
            var schedule = engine.schedule
            schedule.advance(to: localTime)
            return schedule.current.timeline.mediaTime(atLocalTime: localTime)
        }
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
    public func setStallHandler(_ handler: @escaping @Sendable (PlayerStall) -> Void) {
        engine.lock.withLock { engine.stallHandler = handler }
    }

    /// Whether the player is stalled: a `PlayerStall.began` not yet followed by `.ended`.
    public var isStalled: Bool {
        engine.lock.withLock { engine.stall.isStalled }
    }

    // MARK: Transport

    /// Follows `timeline` from its anchor instant on (at once if that is not in the future): the
    /// low-level path a coordinator's delegate uses; it never goes to the group.
    ///
    /// - Parameter discontinuous: whether the media position jumps, so that the decoder must
    ///   seek; nil decides from how far the position moves.
    public func setTimeline(_ timeline: PresentationTimeline, discontinuous: Bool? = nil) throws(MediaError) {
        guard timeline.isValid else { throw MediaError.invalidArgument("rate", "\(timeline.rate) is outside 0.25...4") }
        engine.lock.withLock {
            let jump = discontinuous ?? !engine.isContinuousLocked(timeline)
            engine.scheduleLocked(timeline, discontinuous: jump, now: MonotonicClock.now())
        }
    }

    /// Plays at `rate` from the current position, now; coordinated, asks the group to.
    public func play(rate: Double = 1) throws(MediaError) {
        guard rate > 0 else { throw MediaError.invalidArgument("rate", "play needs a rate above 0; use pause") }
        if playbackCoordinator.isCoordinating {
            try propose("play") { try playbackCoordinator.coordinateRateChange(to: rate) }
            return
        }
        try changeRate(to: rate, at: nil)
    }

    /// Plays at `rate` from the current position, at local instant `at`. Throws
    /// `MediaError.notWhileCoordinated` while coordinated.
    public func play(rate: Double = 1, at localTime: Nanoseconds) throws(MediaError) {
        guard !playbackCoordinator.isCoordinating else { throw MediaError.notWhileCoordinated("play(at:)") }
        guard rate > 0 else { throw MediaError.invalidArgument("rate", "play needs a rate above 0; use pause") }
        try changeRate(to: rate, at: localTime)
    }

    /// Pauses at the current position, now; coordinated, asks the group to.
    public func pause() throws(MediaError) {
        if playbackCoordinator.isCoordinating {
            try propose("pause") { try playbackCoordinator.coordinateRateChange(to: 0) }
            return
        }
        try changeRate(to: 0, at: nil)
    }

    /// Pauses at the current position, at local instant `at`. Throws
    /// `MediaError.notWhileCoordinated` while coordinated.
    public func pause(at localTime: Nanoseconds) throws(MediaError) {
        guard !playbackCoordinator.isCoordinating else { throw MediaError.notWhileCoordinated("pause(at:)") }
        try changeRate(to: 0, at: localTime)
    }

    /// Changes the rate (0 pauses), keeping the media position, now; coordinated, asks the group to.
    public func setRate(_ rate: Double) throws(MediaError) {
        if playbackCoordinator.isCoordinating {
            try propose("change the rate to \(rate)") { try playbackCoordinator.coordinateRateChange(to: rate) }
            return
        }
        try changeRate(to: rate, at: nil)
    }

    /// Changes the rate (0 pauses), keeping the media position, at local instant `at`. Throws
    /// `MediaError.notWhileCoordinated` while coordinated.
    public func setRate(_ rate: Double, at localTime: Nanoseconds) throws(MediaError) {
        guard !playbackCoordinator.isCoordinating else { throw MediaError.notWhileCoordinated("setRate(_:at:)") }
        try changeRate(to: rate, at: localTime)
    }

    /// Moves to `mediaTime`, keeping the rate; coordinated, asks the group to. While playing, the
    /// jump is scheduled a moment ahead (`Options.seekLeadTime`), so that it lands on time.
    public func seek(to mediaTime: Nanoseconds) throws(MediaError) {
        if playbackCoordinator.isCoordinating {
            try propose("seek to \(MediaTime.seconds(mediaTime)) s") { try playbackCoordinator.coordinateSeek(to: mediaTime) }
            return
        }
        try seekLocally(to: mediaTime, at: nil)
    }

    /// Moves to `mediaTime`, keeping the rate, at local instant `at`. Throws
    /// `MediaError.notWhileCoordinated` while coordinated.
    public func seek(to mediaTime: Nanoseconds, at localTime: Nanoseconds) throws(MediaError) {
        guard !playbackCoordinator.isCoordinating else { throw MediaError.notWhileCoordinated("seek(to:at:)") }
        try seekLocally(to: mediaTime, at: localTime)
    }

    private func seekLocally(to mediaTime: Nanoseconds, at localTime: Nanoseconds?) throws(MediaError) {
        let now = MonotonicClock.now()
        let current = timeline
        let instant = localTime ?? (current.rate > 0 ? now + options.seekLeadTime : now)
        try setTimeline(PresentationTimeline(rate: current.rate, anchorMediaTime: mediaTime, anchorLocalTime: instant),
                        discontinuous: true)
    }

    private func changeRate(to rate: Double, at localTime: Nanoseconds?) throws(MediaError) {
        let changed = engine.lock.withLock {
            let newest = engine.schedule.newest
            let instant = max(localTime ?? MonotonicClock.now(), newest.anchorLocalTime)
            return newest.changingRate(to: rate, at: instant)
        }
        try setTimeline(changed, discontinuous: false)
    }

    /// Runs a coordinator call, its error as a `MediaError`.
    private func propose(_ change: String, _ call: () throws -> Void) throws(MediaError) {
        do {
            try call()
        } catch {
            throw MediaError.proposalRefused(change, "\(error)")
        }
    }

    /// Blocks the calling thread until the current item has ended or `timeout` seconds have
    /// passed; returns whether it ended. Call it from a thread of your own, not from a task.
    @discardableResult
    public func waitUntilEnded(timeout: Double) -> Bool {
        let deadline = MonotonicClock.now() + MediaTime.nanoseconds(seconds: timeout)
        return engine.lock.withLock {
            while !engine.ended && !engine.stopped && MonotonicClock.now() < deadline {
                engine.progress.wait(until: deadline)
            }
            return engine.ended
        }
    }
}
