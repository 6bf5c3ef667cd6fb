import Foundation
import TandemPlayback

/// A player without a window: it decodes a media file with FFmpeg on a thread of its own and
/// presents each frame to its sinks at the local monotonic instant that its timeline gives.
///
/// Drive it with `play`, `pause`, `seek` and `setRate`, or hand it whole timelines with
/// `setTimeline(_:)`, as a playback coordinator does: a timeline anchored in the future is a
/// change scheduled for that instant, and the player switches at exactly that instant.
///
/// ```swift
/// let log = try PresentationLog(path: "presented.jsonl")
/// let player = try HeadlessPlayer(url: "movie.mp4", videoSinks: [log])
/// player.play()
/// player.waitUntilEnded(timeout: 60)
/// ```
public final class HeadlessPlayer: @unchecked Sendable {
    /// What the player needs besides the file.
    public struct Options: Sendable {
        /// The item's identifier in presentations and logs; by default the file's name.
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

        /// The defaults: video and audio, FFmpeg's choice of threads, 8 frames ahead.
        public init() {}
    }

    /// What the file holds.
    public let info: MediaInfo
    /// Coordinates this player with a group: `player.playbackCoordinator.coordinateWithSession(session)`
    /// and the player presents frames straight from the group's shared timeline.
    public let playbackCoordinator: PlaybackCoordinator
    /// The item's identifier in presentations and logs.
    public let itemIdentifier: String
    private let options: Options
    private let engine: PlaybackEngine
    /// The coordinator's delegate (it holds its delegate weakly).
    private let coordination: HeadlessPlayerCoordination

    /// Opens `url` and starts decoding, paused at the start (or following `timeline`).
    ///
    /// - Parameters:
    ///   - url: a path, or any URL that libavformat opens.
    ///   - videoSinks: where frames go, in order, at their instants.
    ///   - audioSinks: where sound goes; a `NullAudioSink` is added when none is given.
    ///   - timeline: the timeline to follow from the start; by default paused at the first frame.
    public init(url: String, options: Options = Options(), videoSinks: [any VideoSink] = [],
                audioSinks: [any AudioSink] = [], timeline: PresentationTimeline? = nil) throws(MediaError) {
        let file = try MediaFile(url: url)
        let decoder = try MediaDecoder(file: file, decodeVideo: options.decodeVideo,
                                       decodeAudio: options.decodeAudio, threads: options.threads)
        let start = MediaTime.nanoseconds(seconds: file.info.startTime ?? 0)
        let initial = timeline ?? .paused(at: max(start, 0), from: MonotonicClock.now())
        guard initial.isValid else { throw MediaError.invalidArgument("rate", "\(initial.rate) is outside 0.25...4") }
        info = file.info
        itemIdentifier = options.itemIdentifier ?? URL(fileURLWithPath: url).lastPathComponent
        self.options = options
        var limits = PlaybackEngine.Limits()
        limits.videoFrames = max(2, options.videoQueueFrames)
        limits.spinLead = max(0, options.spinLead)
        limits.realtime = options.realtimePresentation
        engine = PlaybackEngine(
            decoder: decoder, item: itemIdentifier, timeline: initial, limits: limits,
            videoSinks: videoSinks, audioSinks: audioSinks.isEmpty ? [NullAudioSink()] : audioSinks,
            startPosition: max(start, 0)
        )
        coordination = HeadlessPlayerCoordination(itemIdentifier: itemIdentifier, following: options.following)
        playbackCoordinator = PlaybackCoordinator(delegate: coordination)
        coordination.player = self
    }

    deinit {
        engine.stop()
    }

    /// Stops decoding and presenting, and waits for both threads. The player cannot restart.
    public func close() {
        engine.stop()
    }

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

    /// Whether everything up to the end of the file has been presented or dropped.
    public var hasEnded: Bool {
        engine.lock.withLock { engine.ended }
    }

    /// Adds a video sink; it receives frames presented from now on.
    public func addVideoSink(_ sink: any VideoSink) {
        engine.lock.withLock { engine.videoSinks.append(sink) }
    }

    /// Follows `timeline` from its anchor instant on (at once if that is not in the future).
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

    /// Plays at `rate` from the current position, at local instant `at` (by default now).
    public func play(rate: Double = 1, at localTime: Nanoseconds? = nil) throws(MediaError) {
        guard rate > 0 else { throw MediaError.invalidArgument("rate", "play needs a rate above 0; use pause") }
        try changeRate(to: rate, at: localTime)
    }

    /// Pauses at the current position, at local instant `at` (by default now).
    public func pause(at localTime: Nanoseconds? = nil) {
        try? changeRate(to: 0, at: localTime)
    }

    /// Changes the rate (0 pauses), keeping the media position, at local instant `at`.
    public func setRate(_ rate: Double, at localTime: Nanoseconds? = nil) throws(MediaError) {
        try changeRate(to: rate, at: localTime)
    }

    /// Moves to `mediaTime`, keeping the rate. While playing, the jump is scheduled a moment
    /// ahead (`Options.seekLeadTime`) unless `at` says when, so that it lands on time.
    public func seek(to mediaTime: Nanoseconds, at localTime: Nanoseconds? = nil) throws(MediaError) {
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

    /// Blocks the calling thread until playback has ended or `timeout` seconds have passed;
    /// returns whether it ended. Call it from a thread of your own, not from a task.
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
