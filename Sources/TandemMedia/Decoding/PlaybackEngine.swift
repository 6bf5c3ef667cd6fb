/// The state that a player's decoding thread and presentation thread share, under one lock,
/// and the two threads themselves.
///
/// The decoding thread fills bounded queues (so memory stays flat however long the file); the
/// presentation thread empties them at the instants the `TimelineSchedule` gives.
final class PlaybackEngine: @unchecked Sendable {
    /// A decoded item and the decoding generation that produced it.
    struct Queued<Item> {
        let item: Item
        let generation: Int
    }

    /// How much the decoding thread may buffer ahead.
    struct Limits: Sendable {
        /// Frames buffered before the decoder waits (when audio is full too).
        var videoFrames = 8
        /// Audio buffered before the decoder waits (when video is full too), in nanoseconds.
        var audioDuration: Nanoseconds = 1_000_000_000
        /// The decoder always waits past this many times the limits above, whatever the other
        /// stream's level, so that badly interleaved files cannot grow the queues without bound.
        var hardFactor = 4
        /// How long before a deadline the presentation thread stops sleeping and spins on the
        /// clock; 0 sleeps all the way.
        var spinLead: Nanoseconds = 200_000
        /// Whether the presentation thread asks for a real-time priority.
        var realtime = true
    }

    let item: String
    let limits: Limits
    let nominalFrameDuration: Nanoseconds
    let lock = ConditionLock()
    /// Signalled for the presentation thread: a new item, a new timeline, or stop.
    let scheduleChanged: ConditionLock.Condition
    /// Signalled for the decoding thread: space in the queues, a seek, or stop.
    let decodingWanted: ConditionLock.Condition
    /// Signalled when playback ends or the statistics change.
    let progress: ConditionLock.Condition

    // Everything below is guarded by `lock`.
    var schedule: TimelineSchedule
    var video: [Queued<VideoFrame>] = []
    var audio: [Queued<AudioChunk>] = []
    var audioBuffered: Nanoseconds = 0
    var seekRequest: (target: Nanoseconds, generation: Int)?
    var decodingGeneration = 0
    var endOfStreamGeneration: Int?
    var statistics = PlaybackStatistics()
    var videoSinks: [any VideoSink]
    var audioSinks: [any AudioSink]
    var stopped = false
    var ended = false

    private var threads: [WorkerThread] = []

    init(decoder: MediaDecoder, item: String, timeline: PresentationTimeline, limits: Limits,
         videoSinks: [any VideoSink], audioSinks: [any AudioSink], startPosition: Nanoseconds) {
        self.item = item
        self.limits = limits
        self.nominalFrameDuration = decoder.nominalVideoFrameDuration
        self.schedule = TimelineSchedule(timeline)
        self.videoSinks = videoSinks
        self.audioSinks = audioSinks
        scheduleChanged = ConditionLock.Condition(lock)
        decodingWanted = ConditionLock.Condition(lock)
        progress = ConditionLock.Condition(lock)
        if abs(timeline.anchorMediaTime - startPosition) > nominalFrameDuration / 2 {
            seekRequest = (timeline.anchorMediaTime, 0)
        }
        threads.append(WorkerThread(name: "tandem-decode") { [self] in
            decodingLoop(decoder)
        })
        threads.append(WorkerThread(name: "tandem-present", timerSlack: 1, realtime: limits.realtime) { [self] in
            presentationLoop()
        })
    }

    /// Stops both threads and waits for them.
    func stop() {
        lock.withLock {
            stopped = true
            scheduleChanged.broadcast()
            decodingWanted.broadcast()
            progress.broadcast()
        }
        for thread in threads { thread.join() }
        threads.removeAll()
    }

    /// Schedules a timeline; a discontinuous one flushes the queues and seeks the decoder.
    /// Call with the lock held.
    func scheduleLocked(_ timeline: PresentationTimeline, discontinuous: Bool, now: Nanoseconds) {
        let generation = schedule.schedule(timeline, discontinuous: discontinuous, now: now)
        if discontinuous {
            decodingGeneration = generation
            seekRequest = (timeline.anchorMediaTime, generation)
            endOfStreamGeneration = nil
            statistics.discardedFrames += video.count
            video.removeAll()
            audio.removeAll()
            audioBuffered = 0
            decodingWanted.broadcast()
        }
        ended = false
        scheduleChanged.broadcast()
    }

    /// Whether `timeline` continues the newest one without a jump of the media position that
    /// the queued frames could not bridge. Call with the lock held.
    func isContinuousLocked(_ timeline: PresentationTimeline) -> Bool {
        let newest = schedule.newest
        let expected = newest.mediaTime(atLocalTime: max(timeline.anchorLocalTime, newest.anchorLocalTime))
        let jump = timeline.anchorMediaTime - expected
        return jump >= -nominalFrameDuration && jump <= 4 * nominalFrameDuration
    }

    /// Whether the decoder should wait: the queues are full enough. Call with the lock held.
    func queuesFullLocked(hasVideo: Bool, hasAudio: Bool) -> Bool {
        let videoFull = !hasVideo || video.count >= limits.videoFrames
        let audioFull = !hasAudio || audioBuffered >= limits.audioDuration
        let videoOver = hasVideo && video.count >= limits.videoFrames * limits.hardFactor
        let audioOver = hasAudio && audioBuffered >= limits.audioDuration * Nanoseconds(limits.hardFactor)
        return (videoFull && audioFull) || videoOver || audioOver
    }
}
