import TandemClock
import TandemPlayback
import TandemMediaTypes

/// The state that a player's decoding thread and presentation thread share, under one lock,
/// and the two threads themselves.
///
/// The decoding thread fills bounded queues (so memory stays flat however long the file); the
/// presentation thread empties them at the instants the `TimelineSchedule` gives. A second item
/// can be opened and decoded ahead (`Prepared`) while the current one plays; a switch to it is a
/// discontinuous change of the schedule, and at its instant the prepared frames become the
/// queue (`promotePreparedIfDueLocked`), so the new item's first frame is as ready as any other.
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
        /// Audio buffered before the decoder waits (when video is full too).
        var audioDuration = TimeSpan.seconds(1)
        /// The decoder always waits past this many times the limits above, whatever the other
        /// stream's level, so that badly interleaved files cannot grow the queues without bound.
        var hardFactor = 4
        /// How long before a deadline the presentation thread stops sleeping and spins on the
        /// clock; 0 sleeps all the way.
        var spinLead = TimeSpan.microseconds(200)
        /// Whether the presentation thread asks for a real-time priority.
        var realtime = true
        /// Whether the presentation thread's waits feed `WakeGuard.shared` and ask it to cover
        /// frames' deadlines.
        var wakeGuard = false
        /// How many times as long as it takes the decoding thread spends per decoded frame
        /// (1: as fast as it can; benchmarks slow one player down with it).
        var decodeThrottle = 1.0
        /// The latency offset to start with (`latencyOffset`).
        var latencyOffset = TimeSpan.zero
        /// How much sound must be decoded past a position before it counts as ready to play: a
        /// pulling sound output renders that far ahead of the instant its
        /// first sample plays, so the play's first sound must be there by then. 0 without one.
        var soundAhead = TimeSpan.zero
    }

    /// An item opened and decoded ahead, waiting to take over (guarded by `lock`).
    struct Prepared {
        let item: PlaybackItem
        let info: MediaInfo
        let decoder: MediaDecoder
        /// Tells this preparation's decoding results from those of an earlier one.
        var serial: Int
        /// The item time it is decoded from.
        var target: ItemTime
        /// Whether the decoder must still seek to `target`.
        var needsSeek: Bool
        var video: [VideoFrame] = []
        var audio: [AudioChunk] = []
        var audioBuffered = TimeSpan.zero
        var endOfStream = false
        /// The error that ended its decoding early, if any: the statistics' once it takes over.
        var decodingError: String?
        /// The generation its frames get when it takes over: that of the switch, or of a later
        /// discontinuous change that moved its position; nil while no switch is scheduled.
        var generation: Int?
    }

    /// Names and opens the item that follows the one given by identifier (nil: none); called on
    /// the decoding thread with the lock released.
    typealias Follower = @Sendable (_ current: String) -> (item: PlaybackItem, decoder: MediaDecoder)?

    /// A scheduled switch to the prepared item: the schedule's entry for it.
    struct PendingSwitch {
        let generation: Int
        let anchor: HostInstant
    }

    var limits: Limits
    let lock = ConditionLock(conditions: 3)
    /// Signalled for the presentation thread: a new item, a new timeline, or stop.
    let scheduleChanged: ConditionLock.Condition
    /// Signalled for the decoding thread: space in the queues, a seek, or stop.
    let decodingWanted: ConditionLock.Condition
    /// Signalled when playback ends, the item changes or the statistics change.
    let progress: ConditionLock.Condition

    // Everything below is guarded by `lock`.
    var currentItem: PlaybackItem
    var info: MediaInfo
    /// The current item's decoder; only the decoding thread uses it, outside the lock.
    var decoder: MediaDecoder
    var nominalFrameDuration: TimeSpan
    var schedule: TimelineSchedule
    var video: [Queued<VideoFrame>] = []
    var audio: [Queued<AudioChunk>] = []
    var audioBuffered = TimeSpan.zero
    var seekRequest: (target: ItemTime, generation: Int)?
    var decodingGeneration = 0
    var endOfStreamGeneration: Int?
    var prepared: Prepared?
    var pendingSwitch: PendingSwitch?
    /// Opens the item that follows the current one, to be prepared whenever nothing else is.
    var follower: Follower?
    /// The current item the follower was last asked about.
    var followed: String?
    /// The last prepared item that took over: its decoding results still in flight then belong
    /// to the queue, in this generation.
    var promoted: (serial: Int, generation: Int)?
    var nextSerial = 0
    /// Items the program named (`HeadlessPlayer.replaceCurrentItem(with:)` while coordinated),
    /// newest last, so that an adapter can find an item's source by its identifier.
    var namedItems: [PlaybackItem] = []
    var statistics = PlaybackStatistics()
    /// Corrupt packets of earlier items' decoders.
    var corruptPacketsBefore = 0
    var videoSinks: [any VideoSink]
    var audioSinks: [any AudioSink]
    /// Where decoded sound goes, as it is decoded, for a sound output that pulls (nil without one).
    let audioStore: AudioFrameStore?
    var stopped = false
    var ended = false
    var stall: StallDetector
    var stallHandler: (@Sendable (PlayerStall) -> Void)?
    var stallNotices: [PlayerStall] = []
    var deliveringStallNotices = false
    /// Whether a playing timeline has been in force: no stall is raised before the first play.
    var hasPlayed = false
    /// The media time at which the last presented frame (of the primary stream) ends, and its
    /// generation: when the next one falls due.
    var lastPresented: (mediaEnd: ItemTime, generation: Int)?
    /// How much earlier than its timeline gives it everything is presented (the latency offset:
    /// positive for an output that lags). The schedule runs on the
    /// timeline's instants; the presentation thread reads it `latencyOffset` ahead of the
    /// monotonic clock and converts back when it sleeps and when it reports a presentation.
    var latencyOffset = TimeSpan.zero

    /// The instant on the schedule's clock (the timeline's) that host instant `now` is.
    func scheduleTime(_ now: HostInstant) -> HostInstant { now + latencyOffset }

    private var threads: [WorkerThread] = []

    /// The current item's identifier, as presentations name it.
    var item: String { currentItem.identifier }

    init(decoder: MediaDecoder, item: PlaybackItem, timeline: PresentationTimeline, limits: Limits,
         videoSinks: [any VideoSink], audioSinks: [any AudioSink], audioStore: AudioFrameStore? = nil,
         startPosition: ItemTime) {
        self.currentItem = item
        self.info = decoder.file.info
        self.decoder = decoder
        self.limits = limits
        self.latencyOffset = limits.latencyOffset
        self.nominalFrameDuration = TimeSpan(nanoseconds: decoder.nominalVideoFrameDuration)
        self.schedule = TimelineSchedule(timeline)
        self.videoSinks = videoSinks
        self.audioSinks = audioSinks
        self.audioStore = audioStore
        self.stall = StallDetector(recoveryFrames: max(2, min(4, limits.videoFrames / 2)))
        scheduleChanged = lock.condition(0)
        decodingWanted = lock.condition(1)
        progress = lock.condition(2)
        if (timeline.anchorItemTime - startPosition).magnitude.nanoseconds > nominalFrameDuration.nanoseconds / 2 {
            seekRequest = (timeline.anchorItemTime, 0)
        }
        threads.append(WorkerThread(name: "tandem-decode") { [self] in
            decodingLoop()
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
    ///
    /// While a switch to a prepared item is scheduled, a timeline for an instant after the
    /// switch applies to the incoming item (a discontinuous one moves where it is decoded
    /// from); one for the switch's instant or before supersedes the switch, as the schedule
    /// drops it, and the item stays prepared.
    func scheduleLocked(_ timeline: PresentationTimeline, discontinuous: Bool, now monotonic: HostInstant) {
        let now = scheduleTime(monotonic)
        schedule.advance(to: now)
        promotePreparedIfDueLocked()
        if let pending = pendingSwitch {
            if timeline.anchorHostTime > pending.anchor {
                let generation = schedule.schedule(timeline, discontinuous: discontinuous, now: now)
                if discontinuous { retargetPreparedLocked(to: timeline.anchorItemTime, generation: generation) }
                ended = false
                scheduleChanged.broadcast()
                return
            }
            pendingSwitch = nil
            prepared?.generation = nil
        }
        let generation = schedule.schedule(timeline, discontinuous: discontinuous, now: now)
        if discontinuous {
            decodingGeneration = generation
            seekRequest = (timeline.anchorItemTime, generation)
            endOfStreamGeneration = nil
            statistics.discardedFrames += video.count
            video.removeAll()
            audio.removeAll()
            audioBuffered = .zero
            decodingWanted.broadcast()
        }
        ended = false
        scheduleChanged.broadcast()
    }

    /// Makes `prepared` the item decoded ahead, replacing any other. Call with the lock held.
    func prepareLocked(item: PlaybackItem, decoder: MediaDecoder, at target: ItemTime) {
        let start = ItemTime.zero + .seconds(decoder.file.info.startTime ?? 0)
        nextSerial += 1
        prepared = Prepared(item: item, info: decoder.file.info, decoder: decoder, serial: nextSerial, target: target,
                            needsSeek: (target - max(start, .zero)).magnitude.nanoseconds > decoder.nominalVideoFrameDuration / 2,
                            generation: pendingSwitch?.generation)
        if let generation = pendingSwitch?.generation { audioStore?.assign(prepared: nextSerial, to: generation) }
        decodingWanted.broadcast()
    }

    /// Schedules the switch to the prepared item at `timeline`'s anchor; returns false when no
    /// item is prepared. Call with the lock held.
    func switchToPreparedLocked(_ timeline: PresentationTimeline, now monotonic: HostInstant) -> Bool {
        let now = scheduleTime(monotonic)
        schedule.advance(to: now)
        promotePreparedIfDueLocked()
        guard let incoming = prepared else { return false }
        let generation = schedule.schedule(timeline, discontinuous: true, now: now)
        pendingSwitch = PendingSwitch(generation: generation, anchor: timeline.anchorHostTime)
        // Frames decoded from a little before the new position are dropped as stale; from after
        // it, or far before it, the decoder must start again where the timeline says.
        let ahead = timeline.anchorItemTime - incoming.target
        let frame = incoming.decoder.nominalVideoFrameDuration
        if ahead.nanoseconds < -frame / 2 || ahead.nanoseconds > 4 * frame {
            retargetPreparedLocked(to: timeline.anchorItemTime, generation: generation)
        } else {
            prepared?.generation = generation
            audioStore?.assign(prepared: incoming.serial, to: generation)
        }
        ended = false
        promotePreparedIfDueLocked()
        scheduleChanged.broadcast()
        return true
    }

    /// Decodes the prepared item from `target` instead, its frames of `generation`.
    private func retargetPreparedLocked(to target: ItemTime, generation: Int) {
        guard var incoming = prepared else { return }
        nextSerial += 1
        incoming.serial = nextSerial
        incoming.target = target
        incoming.needsSeek = true
        incoming.video.removeAll()
        incoming.audio.removeAll()
        incoming.audioBuffered = .zero
        incoming.endOfStream = false
        incoming.decodingError = nil
        incoming.generation = generation
        prepared = incoming
        audioStore?.assign(prepared: incoming.serial, to: generation)
        decodingWanted.broadcast()
    }

    /// Once the schedule has reached a pending switch, the prepared item becomes the current
    /// one: its frames are the queue, its decoder the one the decoding thread feeds it from,
    /// and nothing of the old item is presented after. Call with the lock held.
    func promotePreparedIfDueLocked() {
        guard let pending = pendingSwitch, schedule.current.generation >= pending.generation,
              let incoming = prepared else { return }
        let generation = incoming.generation ?? pending.generation
        statistics.discardedFrames += video.count
        corruptPacketsBefore += decoder.corruptPackets
        video = incoming.video.map { Queued(item: $0, generation: generation) }
        audio = incoming.audio.map { Queued(item: $0, generation: generation) }
        audioBuffered = incoming.audioBuffered
        decoder = incoming.decoder
        currentItem = incoming.item
        info = incoming.info
        nominalFrameDuration = TimeSpan(nanoseconds: incoming.decoder.nominalVideoFrameDuration)
        decodingGeneration = generation
        seekRequest = incoming.needsSeek ? (incoming.target, generation) : nil
        endOfStreamGeneration = incoming.endOfStream ? generation : nil
        statistics.decodingError = incoming.decodingError
        promoted = (incoming.serial, generation)
        prepared = nil
        pendingSwitch = nil
        lastPresented = nil
        statistics.itemChanges += 1
        decodingWanted.broadcast()
        scheduleChanged.broadcast()
        progress.broadcast()
    }

    /// Whether `timeline` continues the newest one without a jump of the media position that
    /// the queued frames could not bridge. Call with the lock held.
    func isContinuousLocked(_ timeline: PresentationTimeline) -> Bool {
        let newest = schedule.newest
        let expected = newest.itemTime(atHostTime: max(timeline.anchorHostTime, newest.anchorHostTime))
        let jump = timeline.anchorItemTime - expected
        return jump >= -nominalFrameDuration && jump <= nominalFrameDuration * 4
    }

    /// Whether a decoder with these queues should wait: they are full enough.
    func queuesFull(videoCount: Int, audioBuffered: TimeSpan, hasVideo: Bool, hasAudio: Bool) -> Bool {
        let videoFull = !hasVideo || videoCount >= limits.videoFrames
        let audioFull = !hasAudio || audioBuffered >= limits.audioDuration
        let videoOver = hasVideo && videoCount >= limits.videoFrames * limits.hardFactor
        let audioOver = hasAudio && audioBuffered >= limits.audioDuration * Double(limits.hardFactor)
        return (videoFull && audioFull) || videoOver || audioOver
    }

    // MARK: Stalls

    /// Frames (or, without video, audio chunks) of the newest position queued. Lock held.
    func primaryBufferedLocked() -> Int {
        decoder.hasVideo ? video.count(where: { $0.generation == decodingGeneration })
            : audio.count(where: { $0.generation == decodingGeneration })
    }

    /// Whether the newest position is decoded ahead: as many frames as end a stall, or all there
    /// is. Lock held.
    var isReadyLocked: Bool { isDecodedAheadLocked(frames: stall.recoveryFrames) }

    /// Whether the newest position's first frames are decoded: the one that covers it and the
    /// next (or all there is), so that a pre-roll is over. Lock held.
    var isPrerolledLocked: Bool { isDecodedAheadLocked(frames: min(2, stall.recoveryFrames)) }

    /// Whether the newest position has `frames` frames decoded ahead and its sound
    /// `limits.soundAhead` ahead, or all there is. Lock held.
    private func isDecodedAheadLocked(frames: Int) -> Bool {
        guard seekRequest == nil else { return false }
        if endOfStreamGeneration == decodingGeneration { return true }
        guard primaryBufferedLocked() >= frames else { return false }
        let sound = audio.reduce(TimeSpan.zero) { $0 + ($1.generation == decodingGeneration ? $1.item.length : .zero) }
        let videoFull = video.count(where: { $0.generation == decodingGeneration }) >= limits.videoFrames * limits.hardFactor
        return isSoundAhead(sound, videoFull: videoFull)
    }

    /// Whether `sound` decoded from a position are enough to play it: always without a
    /// sound output that renders ahead, or without sound in the item; otherwise once they reach
    /// `limits.soundAhead`, or once the video queue is as full as the decoder lets it grow
    /// without them (a file whose sound starts later, or ended earlier, than its pictures has none
    /// there to wait for). Lock held.
    private func isSoundAhead(_ sound: TimeSpan, videoFull: Bool, decoder: MediaDecoder? = nil) -> Bool {
        guard limits.soundAhead > .zero, audioStore != nil, (decoder ?? self.decoder).hasAudio else { return true }
        return sound >= limits.soundAhead || ((decoder ?? self.decoder).hasVideo && videoFull)
    }

    /// Waits for the decoding or presentation thread's progress until `condition` holds, the
    /// engine stops or host instant `deadline` passes; returns `condition()`. Lock held.
    func waitLocked(until deadline: HostInstant, for condition: () -> Bool) -> Bool {
        while !condition() && !stopped && HostInstant.now() < deadline {
            progress.wait(until: deadline.nanoseconds)
        }
        return condition()
    }

    /// Whether the prepared item is decoded ahead from where it will start. Lock held.
    var isPreparedReadyLocked: Bool {
        guard let incoming = prepared, !incoming.needsSeek else { return false }
        let count = incoming.decoder.hasVideo ? incoming.video.count : incoming.audio.count
        if incoming.endOfStream { return true }
        return count >= stall.recoveryFrames
            && isSoundAhead(incoming.audioBuffered, videoFull: incoming.video.count >= limits.videoFrames * limits.hardFactor, decoder: incoming.decoder)
    }

    /// Hands a stall change to the handler (after the lock is released). Lock held.
    func noteStallLocked(_ change: PlayerStall?) {
        guard let change else { return }
        if change == .began { statistics.stalls += 1 }
        stallNotices.append(change)
    }

    /// Delivers stall changes in the order they happened, with the lock released meanwhile; one
    /// thread delivers at a time, so that `.ended` never overtakes its `.began`. Lock held; since
    /// it lets go of the lock, callers check `stopped` again before they wait.
    func deliverStallNoticesLocked() {
        guard !deliveringStallNotices, !stallNotices.isEmpty else { return }
        deliveringStallNotices = true
        while !stallNotices.isEmpty {
            let notices = stallNotices
            stallNotices.removeAll()
            let handler = stallHandler
            lock.unlock()
            if let handler { for notice in notices { handler(notice) } }
            lock.lock()
        }
        deliveringStallNotices = false
    }
}
