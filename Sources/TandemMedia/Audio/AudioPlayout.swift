import Synchronization
import TandemClock

/// What joins a player's engine to its sound output: the decoded PCM (`AudioFrameStore`, fed
/// by the engine's decoding thread), the playout core that decides what each output frame
/// plays, and the audio log. The output's thread calls `render`; it reads the engine's schedule
/// and latency offset under the engine's lock when the lock is free, and nothing else of the
/// engine.
///
/// The output's thread never waits for the engine's lock. It is the thread that keeps the sound
/// server fed, at a real-time priority; a thread that holds the engine's lock can be held up
/// inside it for tens of milliseconds on a busy machine (waiting on a lock that inherits no
/// priority, such as the allocator's, or on the kernel), and an output waiting behind it runs
/// dry. So while the lock is held, `render` plays from the schedule and latency offset it read
/// last. A schedule a write late misses only what was scheduled since: changes are scheduled
/// ahead of their instants, so the next write, a few milliseconds later, still finds them in
/// time in all but the rarest case, and a change found late is caught up as any late change is
/// (the drift tiers, or the cross-fade of a change of rate or position).
///
/// The output's thread allocates, frees and prints nothing here in the steady state (the rule of
/// every real-time sound path: an allocator's or a file's lock inherits no priority, and a
/// thread of ordinary priority holding one on a busy machine can hold the sound for tens of
/// milliseconds): the core renders into a buffer sized at start, what it reads is noted for the
/// decoder to let go of (`AudioFrameStore.note`), and the log's lines are made and written by
/// the log's own thread from a ring of records (`AudioLog`).
final class AudioPlayout: Sendable {
    /// The most frames one render gives; an output asks for at most this many at once.
    static let maximumFrames = AudioChunk.sampleRate / 2

    let store = AudioFrameStore()
    private let rendering: Mutex<Rendering>
    let log: AudioLog?
    /// Reads the schedule the player follows and its latency offset, once attached.
    private let timing = Mutex<Timing?>(nil)
    /// The schedule and latency offset read last, played from while the player's lock is held.
    private let lastTiming = Mutex<LastTiming?>(nil)
    private let counters = Mutex(SoundStatistics())

    init(log: AudioLog?, configuration: AudioPlayoutCore.Configuration = .init()) {
        self.log = log
        rendering = Mutex(Rendering(core: AudioPlayoutCore(configuration: configuration),
                                    buffer: [Float](repeating: 0, count: Self.maximumFrames * AudioChunk.channelCount)))
        rendering.withLock { rendering in
            rendering.resumable.reserveCapacity(Self.keptStates)
            rendering.stretches = (0...Self.keptStates).map { _ in TimeStretcher() }
        }
    }

    /// The core and the buffer it renders into, kept for every render.
    private struct Rendering {
        var core: AudioPlayoutCore
        var buffer: [Float]
        /// The schedule and latency offset the frames rendered so far follow.
        var rendered: LastTiming?
        /// The core's state at the start of the latest renders, oldest first (reserved once:
        /// keeping them allocates nothing), for an output that writes again from one of them.
        var resumable: [(instant: LocalInstant, state: AudioPlayoutCore.State?, slot: Int)] = []
        /// Where the kept states' stretches are held, one more than the states kept: a state
        /// keeps its voice's stretch in the slot it names.
        var stretches: [TimeStretcher] = []
    }

    /// How many renders' starting states are kept.
    static let keptStates = 32

    /// From now on the output plays what `timing` (the player's schedule and latency offset)
    /// gives; `timing` returns nil, rather than wait, while the player's lock is held, and the
    /// output then plays from what it gave last.
    func attach(timing: @escaping @Sendable () -> (TimelineSchedule, TimeSpan)?) {
        self.timing.withLock { $0 = Timing(read: timing) }
    }

    /// The player's timing, held in a struct: a bare closure held by the generic `Mutex` is
    /// stored in its generic form, and every access under the lock wraps it in a conversion each
    /// way and writes it back, one closure deeper at every render, until the output's thread
    /// runs out of stack. A struct's field keeps its own form.
    private struct Timing: Sendable {
        let read: @Sendable () -> (TimelineSchedule, TimeSpan)?
    }

    private struct LastTiming: Sendable, Equatable {
        var schedule: TimelineSchedule
        var offset: TimeSpan
    }

    /// As `render(frames:instant:period:holding:into:)`, into samples of its own.
    func render(frames: Int, instant: LocalInstant, period: Double, holding: LocalInstant) -> [Float] {
        var samples = [Float](repeating: 0, count: frames * AudioChunk.channelCount)
        let rendered = samples.withUnsafeMutableBufferPointer { buffer in
            render(frames: frames, instant: instant, period: period, holding: holding, into: buffer)
        }
        samples.removeSubrange((rendered * AudioChunk.channelCount)...)
        return samples
    }

    /// Renders up to `frames` output frames (at most `maximumFrames`) from `instant` on, one
    /// every `period` ns, into `output` (interleaved stereo, room for `frames`; silence until
    /// attached); returns how many: fewer when the media of a start is not decoded yet, leaving
    /// out only frames that reach the output at `holding` or later, for the output to ask again.
    func render(frames wanted: Int, instant: LocalInstant, period: Double, holding: LocalInstant,
                into output: UnsafeMutableBufferPointer<Float>) -> Int {
        let frames = min(wanted, Self.maximumFrames, output.count / AudioChunk.channelCount)
        let channels = AudioChunk.channelCount
        guard let timing = timing.withLock({ $0 }) else {
            Self.silence(output, frames: frames)
            return frames
        }
        let called = LocalInstant(nanoseconds: HostInstant.now().nanoseconds)
        let read = timing.read().map { LastTiming(schedule: $0.0, offset: $0.1) }
        guard let current = read ?? lastTiming.withLock({ $0 }) else {
            Self.silence(output, frames: frames)
            return frames
        }
        if let read {
            // Stored only when it changed: the steady state copies nothing.
            lastTiming.withLock { if $0 != read { $0 = read } }
        } else {
            log?.busy(at: called)
        }
        let (schedule, offset) = (current.schedule, current.offset)
        let holdsBackFrom = max(0, Int((Double((holding - instant).nanoseconds) / period).rounded(.up)))
        let request = AudioPlayoutCore.Request(frames: frames, firstInstant: instant, framePeriod: period, holdsBackFrom: holdsBackFrom)
        let store = store
        var reading = AudioFrameStore.Reading()
        reading.add(schedule.current.generation)
        for entry in schedule.pending { reading.add(entry.generation) }
        let rendered = rendering.withLock { rendering in
            // Renders from this instant on replace those kept from it on.
            while let last = rendering.resumable.last, last.instant >= instant { rendering.resumable.removeLast() }
            if rendering.resumable.count == Self.keptStates { rendering.resumable.removeFirst() }
            let slot = (0...Self.keptStates).first { slot in !rendering.resumable.contains { $0.slot == slot } } ?? 0
            let state = rendering.core.resumable(keepingStretchIn: &rendering.stretches[slot])
            rendering.resumable.append((instant, state, slot))
            // The frames written before this request follow the timing rendered last: when the
            // new one differs between now and this request's first frame, the output is yet to
            // hear of it (`change(notBefore:)`) and writes them again. (Before now, the two
            // differ only by the changes come into force since.)
            if let previous = rendering.rendered, previous != current,
               Self.difference(current, from: previous, notBefore: called).map({ $0 < instant }) ?? false {
            } else {
                rendering.rendered = current
            }
            let rendered = rendering.core.render(request, schedule: schedule, latencyOffset: offset,
                                                 source: store, into: &rendering.buffer)
            rendering.core.addReading(to: &reading)
            rendering.buffer.withUnsafeBufferPointer { buffer in
                for index in 0..<(rendered.frames * channels) { output[index] = buffer[index] }
            }
            return rendered
        }
        store.note(reading)
        counters.withLock { counters in
            counters.snaps += rendered.snaps.count
            counters.missingFrames += rendered.missingFrames
            if let write = rendered.write, rendered.frames > 0 {
                counters.writes += 1
                counters.lateness = write.expected - write.intended
                counters.correction = write.correction
                counters.largestCorrection = max(counters.largestCorrection, abs(write.correction))
            }
        }
        if let log {
            if let write = rendered.write, rendered.frames > 0 {
                let frameIndex = Int(((Double((write.expected - instant).nanoseconds)) / period).rounded())
                log.write(item: store.item(generation: write.generation), media: write.media, intended: write.intended,
                          expected: write.expected, frames: rendered.frames - max(0, frameIndex), rate: write.rate,
                          correction: write.correction, lead: instant - called)
            }
            for snap in rendered.snaps { log.snap(at: snap.at, error: snap.error) }
            if rendered.missingFrames > 0 { log.missing(at: instant, frames: rendered.missingFrames) }
        }
        return rendered.frames
    }

    /// The local instant, not before `earliest`, from which the player's timing now differs from
    /// the one the frames rendered so far follow; nil when it does not, or when the player's
    /// lock is held (asked again shortly). The timing read is taken as heard: it is not reported
    /// again.
    func change(notBefore earliest: LocalInstant) -> LocalInstant? {
        guard let timing = timing.withLock({ $0 }), let read = timing.read().map({ LastTiming(schedule: $0.0, offset: $0.1) }) else {
            return nil
        }
        return rendering.withLock { rendering in
            guard let previous = rendering.rendered else { return nil }
            rendering.rendered = read
            guard previous != read else { return nil }
            return Self.difference(read, from: previous, notBefore: earliest)
        }
    }

    /// The first local instant, not before `earliest`, at which `timing` plays differently from
    /// `previous`: `earliest` when their latency offsets differ.
    private static func difference(_ timing: LastTiming, from previous: LastTiming, notBefore earliest: LocalInstant) -> LocalInstant? {
        guard timing.offset == previous.offset else { return earliest }
        return timing.schedule.firstDifference(from: previous.schedule, notBefore: HostInstant(nanoseconds: earliest.nanoseconds) + timing.offset)
            .map { LocalInstant(nanoseconds: ($0 - timing.offset).nanoseconds) }
    }

    /// Puts the core back in its state at the start of the render that started at `instant`, the
    /// renders after it forgotten; false when none is kept for it (or its state could not be).
    func resume(at instant: LocalInstant) -> Bool {
        rendering.withLock { rendering in
            guard let index = rendering.resumable.lastIndex(where: { $0.instant == instant }),
                  let state = rendering.resumable[index].state else { return false }
            rendering.core.resume(state, stretch: rendering.stretches[rendering.resumable[index].slot])
            rendering.resumable.removeSubrange(index...)
            return true
        }
    }

    private static func silence(_ output: UnsafeMutableBufferPointer<Float>, frames: Int) {
        for index in 0..<(frames * AudioChunk.channelCount) { output[index] = 0 }
    }

    /// Hears the output's events.
    func handle(_ event: PulseAudioOutput.Event) {
        switch event {
        case .underrun(let at):
            counters.withLock { $0.underruns += 1 }
            log?.underrun(at: at)
        case .latency(let at, let latency):
            counters.withLock { $0.latency = latency }
            log?.latency(at: at, latency: latency)
        case .priority(let at, let realtime, let errno):
            log?.priority(at: at, realtime: realtime, errno: errno)
        case .rewriting(let rewriting):
            rewriting.connect(.init(change: { [unowned self] in change(notBefore: $0) },
                                    resume: { [unowned self] in resume(at: $0) }))
        case .rewrite(let at, let from, let frames):
            log?.rewrite(at: at, from: from, frames: frames)
        case .failed:
            break
        }
    }

    /// What the output has done so far.
    var statistics: SoundStatistics {
        counters.withLock { $0 }
    }
}
