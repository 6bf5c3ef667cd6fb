import TandemClock

/// The pure core of the sound output: given the timelines the player follows and a request
/// "`frames` output frames, the first of which reaches the output at local instant T, one every
/// `framePeriod`", it decides which media frames fill them, and renders them.
///
/// - Silence while paused and before the first play; the media frames the timeline gives at
///   those instants while playing.
/// - A change (play, pause, seek, rate, item) takes effect at the first output frame whose
///   instant is at or after the change's, to the sample. What played before it fades out over
///   `fadeFrames` from there, and what plays after it fades in from there, so that nothing clicks;
///   a seek never plays the old position past those few frames.
/// - Drift, in three tiers. The error is the media position the output reads minus the one the
///   timeline gives for the instant that frame reaches the output. At a rate near 1 the output
///   reads the timeline's position itself, between whole frames where it falls there (by
///   `BandLimitedInterpolator`, flat across the audible band): each request's reading rate is
///   the one that lands the position exactly on the timeline's at its last frame, when that is
///   within `maximumCorrection`, so no rounding onto a whole frame is left in the sound. The
///   decoded samples then pass bit-exact only where the output's clock and the timeline agree to
///   the frame (a fraction of 0), which drifting clocks never do for long: an output rounded onto
///   whole frames would be off by up to half a frame, and slip a whole frame at a time. At other
///   rates errors within `deadBand` are left to the stretch. Beyond that the reading rate is
///   adjusted in proportion to the error (`correctionTime`), never beyond `maximumCorrection`
///   (±0.5 %). Beyond `snapThreshold` (after a stall or an underrun) the output jumps to the
///   timeline's position, with the same fades.
/// - A rate within 0.5 % of 1 (1 in the session's time, seen through a drifting clock) plays as
///   rate 1, the drift tiers taking the difference away. At other rates the media is
///   time-stretched (`TimeStretcher`, WSOLA: the pitch kept, its nominal position exact, each
///   sound within the stretch's bound of it); a change between rate 1 and another rate
///   cross-fades, like a seek, from the same position.
///
/// - A write that would read media not yet decoded, in the first `holdBackWindow` frames of a
///   voice, stops short of it when the request allows (`Request.holdsBackFrom`): the output
///   writes the rest once the decoding has caught up, rather than a gap of silence. After a seek
///   the decoder starts from the target when the change is decided, and the output renders
///   ahead by its latency, so its first write of the new position can come before the position
///   is decoded. Frames before `holdsBackFrom` (those due too soon to wait for) are rendered in
///   any case, silent where they are missing.
///
/// Instants are on the monotonic clock; `latencyOffset` moves the sound as it moves the
/// pictures (a frame reaching the output at T plays the timeline's media at T + offset).
struct AudioPlayoutCore {
    /// The tiers and the fades.
    struct Configuration: Sendable {
        /// At rates other than 1 (stretched), errors up to this many media frames are left alone.
        var deadBand = 0.5
        /// Errors beyond this (in output time) are snapped rather than resampled away.
        var snapThreshold = TimeSpan.milliseconds(20)
        /// The largest change of the reading rate, as a fraction.
        var maximumCorrection = 0.005
        /// The proportional tier corrects the error at the rate that would take it away in this time.
        var correctionTime = TimeSpan.milliseconds(100)
        /// The fades' length, in output frames (2 ms).
        var fadeFrames = 96
        /// How long, in output frames from a voice's start, a write may stop short of media not
        /// yet decoded (100 ms): a start's decoding catching up. Later a shortfall is a stall,
        /// played as silence and waited out by the group.
        var holdBackWindow = 4_800
    }

    /// A request of the output.
    struct Request: Sendable {
        /// Output frames wanted.
        var frames: Int
        /// The local monotonic instant at which the first of them reaches the output.
        var firstInstant: LocalInstant
        /// The output's frame period as measured, in nanoseconds (nominally 1/48000 s).
        var framePeriod: Double
        /// The first frame the request may leave out, when what it would play is not decoded
        /// yet (see the type's description); nil renders every frame.
        var holdsBackFrom: Int?
    }

    /// The first frame of a request that plays media: what the audio log records for a write.
    struct Write: Sendable, Equatable {
        /// Its generation (the item and decoding run).
        var generation: Int
        /// Its media position, in frames at 48 kHz.
        var media: Double
        /// The local instant at which the timeline says that media frame must reach the output.
        var intended: LocalInstant
        /// The local instant at which the output will play it (the request's model).
        var expected: LocalInstant
        /// The timeline's rate.
        var rate: Double
        /// The reading rate's correction, as a fraction.
        var correction: Double
    }

    /// A jump to the timeline's position.
    struct Snap: Sendable, Equatable {
        /// The local instant of the output frame at which it was made.
        var at: LocalInstant
        /// The error it took away (positive: the output was ahead of the timeline).
        var error: TimeSpan
    }

    /// What one request rendered.
    struct Rendered: Sendable {
        /// Frames rendered: the request's, fewer when it was held back.
        var frames = 0
        /// Interleaved stereo samples in −1...1, `frames × 2` of them, from
        /// `render(_:schedule:latencyOffset:source:)`; empty from `render(…into:)`, which
        /// renders into the caller's buffer.
        var samples: [Float] = []
        /// Whether fewer frames were rendered than asked for, their media not decoded yet.
        var heldBack = false
        /// The first frame that plays media, if any does.
        var write: Write?
        /// The snaps made.
        var snaps: [Snap] = []
        /// Frames that should have played media that was not decoded (silence instead).
        var missingFrames = 0
    }

    /// A run of media being read.
    struct Voice: Sendable {
        var generation: Int
        /// The media frame the next output frame reads (fractional between whole frames).
        var position: Double
        /// Media frames read per output frame.
        var step: Double
        /// The timeline's rate.
        var rate: Double
        /// Where the position lands after the current segment, when the step was chosen to land it there.
        var landing: Double?
        /// Frames into its fade (in, for the voice; out, for a fading one); nil when not fading in.
        var fade: Int?
        /// At rates other than 1: the stretch that keeps the pitch.
        var stretcher: TimeStretcher?
        /// At rates other than 1: where the stretch cuts its pieces, the same for every participant.
        var grid: TimeStretcher.Grid?
        /// Output frames it has rendered.
        var played = 0
    }

    let configuration: Configuration
    /// The media being played, if any.
    private(set) var voice: Voice?
    /// Media fading out after a change.
    private(set) var fading: [Voice] = []
    /// The media a request reads, sized at start for the largest read at rate 1 (a second of
    /// output at the largest correction), so that rendering allocates nothing.
    private var scratch: [Float]
    /// What the stretch renders, and what it reads from the store, kept from one request to the
    /// next (at rates other than 1) so that stretching allocates only as they first grow.
    private var stretchOutput: [Int16] = []
    private var stretchRead: [Float] = []

    /// A core with nothing playing.
    init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        scratch = [Float](repeating: 0, count: (AudioChunk.sampleRate * 21 / 20 + 4 * BandLimitedInterpolator.halfTaps) * AudioChunk.channelCount)
        fading.reserveCapacity(4)
    }

    /// What the core carries from one request to the next (the voices), kept by an output that
    /// may render again from an earlier request's start (`resume(_:stretch:)`).
    struct State: Sendable {
        var voice: Voice?
        var fading: [Voice]
        /// Whether the voice stretches: its stretch's state is kept apart, in the stretcher given
        /// to `resumable(keepingStretchIn:)`, and the voice here has none.
        var stretched = false
    }

    /// The state to render again from, the voice's stretch (if it stretches) copied into `held`;
    /// nil while a fading voice stretches. Copying it allocates nothing while nothing fades, once
    /// `held` has held a stretch as long.
    func resumable(keepingStretchIn held: inout TimeStretcher) -> State? {
        guard fading.allSatisfy({ $0.stretcher == nil }) else { return nil }
        let fading = fading.isEmpty ? [] : fading
        guard let stretcher = voice?.stretcher else { return State(voice: voice, fading: fading) }
        held.copyState(from: stretcher)
        var kept = voice
        kept?.stretcher = nil
        return State(voice: kept, fading: fading, stretched: true)
    }

    /// The state to render again from, when the voice does not stretch (see
    /// `resumable(keepingStretchIn:)`).
    var resumable: State? {
        guard voice?.stretcher == nil, fading.allSatisfy({ $0.stretcher == nil }) else { return nil }
        return State(voice: voice, fading: fading.isEmpty ? [] : fading)
    }

    /// Goes back to `state` (from `resumable…`), its stretch from `stretch` when it stretched:
    /// the next request renders as the one that followed it did, under the schedule it is given.
    /// The voice's stretcher, if it has one, takes the kept stretch's state in its own buffers.
    mutating func resume(_ state: State, stretch: TimeStretcher? = nil) {
        var reused = voice?.stretcher
        voice = state.voice
        if state.fading.isEmpty { fading.removeAll(keepingCapacity: true) } else { fading = state.fading }
        guard state.stretched else { return }
        guard let stretch else {
            preconditionFailure("a stretching voice resumes with its kept stretch")
        }
        var stretcher = reused ?? TimeStretcher()
        reused = nil
        stretcher.copyState(from: stretch)
        voice?.stretcher = stretcher
    }

    /// Media frames per second.
    static let rate = Double(AudioChunk.sampleRate)

    /// The generations the core reads now (the voice's and the fading ones'), with their
    /// positions, added to `reading`.
    func addReading(to reading: inout AudioFrameStore.Reading) {
        for outgoing in fading { reading.add(outgoing.generation, position: Int64(outgoing.position.rounded(.down))) }
        if let voice { reading.add(voice.generation, position: Int64(voice.position.rounded(.down))) }
    }

    /// Renders `request` on `schedule` (with the player's `latencyOffset`) from `source`, into
    /// samples of its own (`Rendered.samples`).
    mutating func render(_ request: Request, schedule: TimelineSchedule, latencyOffset: TimeSpan,
                         source: some AudioFrameSource) -> Rendered {
        var samples: [Float] = []
        var rendered = render(request, schedule: schedule, latencyOffset: latencyOffset, source: source, into: &samples)
        rendered.samples = Array(samples[0..<(rendered.frames * AudioChunk.channelCount)])
        return rendered
    }

    /// Renders `request` on `schedule` (with the player's `latencyOffset`) from `source` into the
    /// first `Rendered.frames × 2` of `samples`, which grows only when it is shorter than the
    /// request: an output that keeps one buffer for all its requests renders without allocating
    /// (but at a change of item, position or rate, when a voice starts or fades, and for a snap).
    mutating func render(_ request: Request, schedule: TimelineSchedule, latencyOffset: TimeSpan,
                         source: some AudioFrameSource, into samples: inout [Float]) -> Rendered {
        let channels = AudioChunk.channelCount
        if samples.count < request.frames * channels { samples = [Float](repeating: 0, count: request.frames * channels) }
        samples.withUnsafeMutableBufferPointer { buffer in
            for index in 0..<(request.frames * channels) { buffer[index] = 0 }
        }
        var rendered = Rendered(frames: request.frames)
        var schedule = schedule
        let offset = Double(latencyOffset.nanoseconds)
        // On the schedule's clock: the latency offset ahead of the monotonic one.
        let first = Double(request.firstInstant.nanoseconds) + offset
        let period = request.framePeriod
        var frame = 0
        while frame < request.frames {
            let instant = first + Double(frame) * period
            // A frame's instant is rounded to the nanosecond, so that a change falls on one frame
            // however the periods add up.
            schedule.advance(to: HostInstant(nanoseconds: Int64(instant.rounded())))
            var end = request.frames
            // The next change, or the anchor of a timeline in force only from a later instant
            // (a player opened with a future start): silence until it.
            let anchor = schedule.current.timeline.anchorHostTime.nanoseconds
            let upcoming = Double(anchor) > instant.rounded() ? anchor : schedule.nextChange?.nanoseconds
            if let next = upcoming {
                var boundary = max(frame + 1, Int(((Double(next) - first) / period).rounded(.up)) - 1)
                while boundary < end && Int64((first + Double(boundary) * period).rounded()) < next { boundary += 1 }
                end = min(end, boundary)
            }
            decide(schedule.current, at: instant, frames: end - frame, period: period, offset: offset, &rendered)
            if rendered.write == nil, let voice {
                let timeline = schedule.current.timeline
                let media = voice.position
                let mediaNs = media * 1e9 / AudioPlayoutCore.rate
                let intended = Double(timeline.anchorHostTime.nanoseconds) + (mediaNs - Double(timeline.anchorItemTime.nanoseconds)) / timeline.rate - offset
                rendered.write = Write(generation: voice.generation, media: media,
                                       intended: LocalInstant(nanoseconds: Int64(intended.rounded())),
                                       expected: LocalInstant(nanoseconds: Int64((instant - offset).rounded())),
                                       rate: timeline.rate,
                                       correction: voice.step / AudioPlayoutCore.nominalStep(voice.rate) - 1)
            }
            if let holding = request.holdsBackFrom {
                let stop = max(frame + readableFrames(source: source), holding)
                if stop < end {
                    // The step chosen to land the position at the segment's end does not land it
                    // at `stop`: the position moves on by the step.
                    voice?.landing = nil
                    renderSegment(frame..<stop, into: &rendered, samples: &samples, source: source)
                    rendered.frames = stop
                    rendered.heldBack = true
                    return rendered
                }
            }
            renderSegment(frame..<end, into: &rendered, samples: &samples, source: source)
            frame = end
        }
        return rendered
    }

    /// How many output frames from now the voice can read from decoded media, if it may be held
    /// back (a voice reading the samples as they are, in its first `holdBackWindow` frames); else
    /// as many as any request has.
    private func readableFrames(source: some AudioFrameSource) -> Int {
        guard let voice, voice.stretcher == nil, voice.played < configuration.holdBackWindow else { return .max / 2 }
        guard let decodedEnd = source.decodedEnd(generation: voice.generation, from: Int64(voice.position.rounded(.down))) else {
            return 0
        }
        // A frame at position p reads the whole frames around it up to floor(p) + halfTaps.
        let last = (Double(decodedEnd) - Double(BandLimitedInterpolator.halfTaps + 1) - voice.position) / voice.step
        return last < 0 ? 0 : Int(last.rounded(.down)) + 1
    }

    /// Chooses, at the first output frame of a segment (on the schedule's clock), what plays
    /// through it: the timeline in force's media, read at the step the drift tiers give.
    private mutating func decide(_ entry: TimelineSchedule.Entry, at instant: Double, frames: Int, period: Double,
                                 offset: Double, _ rendered: inout Rendered) {
        let timeline = entry.timeline
        guard timeline.rate > 0, instant.rounded() >= Double(timeline.anchorHostTime.nanoseconds) else {
            fadeOutVoice()
            return
        }
        let targetNs = Double(timeline.anchorItemTime.nanoseconds) + timeline.rate * (instant - Double(timeline.anchorHostTime.nanoseconds))
        let target = targetNs * AudioPlayoutCore.rate / 1e9
        // Media frames per output frame, per the timeline and the output's measured period.
        let perFrame = timeline.rate * period * AudioPlayoutCore.rate / 1e9
        guard var current = voice, current.generation == entry.generation else {
            fadeOutVoice()
            voice = startingVoice(generation: entry.generation, at: target, timeline: timeline, perFrame: perFrame)
            return
        }
        let error = current.position - target
        let errorNs = error / timeline.rate * 1e9 / AudioPlayoutCore.rate
        let grid = AudioPlayoutCore.isNearUnity(timeline.rate) ? nil : AudioPlayoutCore.grid(timeline)
        if AudioPlayoutCore.isNearUnity(current.rate) != AudioPlayoutCore.isNearUnity(timeline.rate)
            || (current.grid != nil && grid != nil && current.grid?.rate != grid?.rate) {
            // Between reading the samples as they are and stretching them, or between two
            // stretched rates: a cross-fade into a voice on the timeline's position (and its
            // grid), so that nothing clicks. On time, that is where the
            // voice is; a change heard after the output had rendered past its instant (a rate
            // change with less lead than the output's latency) left the voice where the old rate
            // took it, and the new voice lands on the timeline at once rather than drifting there
            // at ±0.5 %. However large the error, this is the change's cross-fade, not a snap
            // (which is for a stall).
            fadeOutVoice()
            voice = startingVoice(generation: entry.generation, at: target, timeline: timeline, perFrame: perFrame)
            return
        }
        if abs(errorNs) > Double(configuration.snapThreshold.nanoseconds) {
            rendered.snaps.append(Snap(at: LocalInstant(nanoseconds: Int64((instant - offset).rounded())),
                                       error: TimeSpan(nanoseconds: Int64(errorNs.rounded()))))
            fadeOutVoice()
            voice = startingVoice(generation: entry.generation, at: target, timeline: timeline, perFrame: perFrame)
            return
        }
        current.rate = timeline.rate
        if current.stretcher != nil { current.grid = grid }
        (current.step, current.landing) = control(position: current.position, error: error, target: target,
                                                  perFrame: perFrame, rate: timeline.rate, frames: frames)
        voice = current
    }

    /// A voice that starts reading `target`, fading in; near rate 1 at the timeline's own rate
    /// against the output's (`perFrame` media frames an output frame, within the largest
    /// correction), so that it is on the timeline from its first frame to its first decision.
    private func startingVoice(generation: Int, at target: Double, timeline: PresentationTimeline, perFrame: Double) -> Voice {
        let rate = timeline.rate
        let unity = AudioPlayoutCore.isNearUnity(rate)
        let limit = configuration.maximumCorrection
        // A step within the arithmetic's rounding of 1 is 1, so that whole frames stay whole.
        let exact = abs(perFrame - 1) < 1e-9 ? 1 : perFrame
        let step = unity ? min(max(exact, 1 - limit), 1 + limit) : AudioPlayoutCore.nominalStep(rate)
        return Voice(generation: generation, position: unity ? AudioPlayoutCore.settled(target) : target, step: step, rate: rate,
                     landing: nil, fade: 0, stretcher: unity ? nil : TimeStretcher(), grid: unity ? nil : AudioPlayoutCore.grid(timeline))
    }

    /// The grid a stretched timeline's pieces are cut on: the group's timeline it carries out,
    /// the same for every participant. A timeline of no group's (a player alone) is cut from
    /// its own anchor, at its rate to the nearest 1/400 (the rates people choose, 1.5, 0.75,
    /// 1.1, 1.33, are multiples of it, and a clock's drift of a few hundred ppm is rounded away).
    static func grid(_ timeline: PresentationTimeline) -> TimeStretcher.Grid {
        let range = TimeStretcher.rates
        if let group = timeline.group, range.contains(group.rate) {
            return TimeStretcher.Grid(origin: Double(group.itemTime.nanoseconds) * AudioPlayoutCore.rate / 1e9, rate: group.rate)
        }
        let rate = min(max((timeline.rate * 400).rounded() / 400, range.lowerBound), range.upperBound)
        return TimeStretcher.Grid(origin: Double(timeline.anchorItemTime.nanoseconds) * AudioPlayoutCore.rate / 1e9, rate: rate)
    }

    /// The drift tiers: the step for the next `frames` output frames, and where it lands.
    func control(position: Double, error: Double, target: Double, perFrame: Double, rate: Double,
                 frames: Int) -> (step: Double, landing: Double?) {
        let unity = AudioPlayoutCore.isNearUnity(rate)
        let nominal = AudioPlayoutCore.nominalStep(rate)
        if unity {
            // The timeline's own position at the segment's end, between frames where it falls.
            let landing = AudioPlayoutCore.settled(target + perFrame * Double(frames))
            let step = (landing - position) / Double(frames)
            if abs(step - 1) <= configuration.maximumCorrection { return (step, landing) }
        } else if abs(error) <= configuration.deadBand {
            return (nominal, nil)
        }
        let correctionFrames = configuration.correctionTime.seconds * AudioPlayoutCore.rate
        let correction = min(max(-(error / rate) / correctionFrames, -configuration.maximumCorrection),
                             configuration.maximumCorrection)
        return (nominal * (1 + correction), nil)
    }

    /// `position`, or the whole frame it lies within a thousandth of a frame of: the instants'
    /// rounding to the nanosecond, far below what any output knows of its timing, does not keep
    /// a timeline that falls on whole frames from passing its samples bit-exact.
    static func settled(_ position: Double) -> Double {
        let whole = position.rounded()
        return abs(position - whole) < 1e-3 ? whole : position
    }

    /// Whether a timeline's rate is 1 but for a clock's drift (within the largest correction): it
    /// is played as rate 1, reading the samples as they are, and the drift tiers take the
    /// difference away; other rates are stretched.
    static func isNearUnity(_ rate: Double) -> Bool {
        abs(rate - 1) <= 0.005
    }

    /// Media frames read per output frame before any correction: 1 for a rate near 1, else the rate.
    static func nominalStep(_ rate: Double) -> Double {
        isNearUnity(rate) ? 1 : rate
    }

    private mutating func fadeOutVoice() {
        guard var outgoing = voice else { return }
        voice = nil
        outgoing.landing = nil
        // A voice still fading in fades out from the gain it reached.
        let fadeFrames = configuration.fadeFrames
        let reached = outgoing.fade.map { max(0, fadeFrames - 1 - $0) } ?? 0
        outgoing.fade = reached
        fading.append(outgoing)
    }

    private mutating func renderSegment(_ frames: Range<Int>, into rendered: inout Rendered, samples: inout [Float],
                                        source: some AudioFrameSource) {
        let fadeFrames = configuration.fadeFrames
        if var current = voice {
            // Taken out while it renders, so that its stretch's buffers have one holder and
            // change in place.
            voice = nil
            let missing = render(voice: &current, frames: frames, into: &samples, source: source) { fade in
                guard let fade, fade < fadeFrames else { return 1 }
                return Float(fade + 1) / Float(fadeFrames + 1)
            }
            rendered.missingFrames += missing
            current.played += frames.count
            if let fade = current.fade { current.fade = fade + frames.count >= fadeFrames ? nil : fade + frames.count }
            voice = current
        }
        // In place (the array keeps its capacity): the fading voices render, and those done go.
        for index in fading.indices {
            var outgoing = fading[index]
            let done = outgoing.fade ?? fadeFrames
            guard done < fadeFrames else { continue }
            fading[index].stretcher = nil
            let count = min(frames.count, fadeFrames - done)
            _ = render(voice: &outgoing, frames: frames.lowerBound..<(frames.lowerBound + count),
                       into: &samples, source: source) { fade in
                let fade = fade ?? fadeFrames
                return fade >= fadeFrames ? 0 : 1 - Float(fade + 1) / Float(fadeFrames + 1)
            }
            outgoing.fade = done + count
            fading[index] = outgoing
        }
        fading.removeAll { ($0.fade ?? fadeFrames) >= fadeFrames }
    }

    /// Adds `voice`'s media, times `gain(frames into its fade)`, to `frames` of `samples`, and
    /// moves it on; returns how many frames it wanted that were not decoded.
    private mutating func render(voice: inout Voice, frames: Range<Int>, into samples: inout [Float],
                                 source: some AudioFrameSource, gain: (Int?) -> Float) -> Int {
        let count = frames.count
        guard count > 0 else { return 0 }
        if voice.stretcher != nil {
            return renderStretched(voice: &voice, frames: frames, into: &samples, source: source, gain: gain)
        }
        let channels = AudioChunk.channelCount
        let start = voice.position
        let end = voice.landing ?? (start + voice.step * Double(count))
        let halfTaps = Int64(BandLimitedInterpolator.halfTaps)
        let lowest = Int64(min(start, end).rounded(.down)) - halfTaps + 1
        let highest = Int64(max(start, end).rounded(.down)) + halfTaps + 1
        let span = Int(highest - lowest)
        let found = source.read(generation: voice.generation, from: lowest, count: span, into: &scratch)
        // Frames the source did not have: those beyond what it found (decoding behind), roughly.
        let missing = max(0, min(count, span - Int(halfTaps) - 1 - found))
        let step = voice.step
        let fadeStart = voice.fade
        scratch.withUnsafeBufferPointer { read in
            for index in 0..<count {
                let position = start + step * Double(index)
                let whole = position.rounded(.down)
                let fraction = position - whole
                let center = Int(Int64(whole) - lowest)
                let level = gain(fadeStart.map { $0 + index })
                let out = (frames.lowerBound + index) * channels
                for channel in 0..<channels {
                    let value = BandLimitedInterpolator.value(read, center: center, fraction: fraction, channel: channel, channels: channels)
                    samples[out + channel] += level == 1 ? value : value * level
                }
            }
        }
        voice.position = end
        voice.landing = nil
        return missing
    }

    /// As `render(voice:…)`, at a rate other than 1: the media is time-stretched (`TimeStretcher`),
    /// its pitch kept, its nominal position the same as the resampler's would be.
    ///
    /// The stretcher is taken out of the voice while it renders, so that it is the only holder
    /// of its buffers and changes them in place (a second holder would make every change copy
    /// them); what it renders and what it reads go through buffers the core keeps.
    private mutating func renderStretched(voice: inout Voice, frames: Range<Int>, into samples: inout [Float],
                                          source: some AudioFrameSource, gain: (Int?) -> Float) -> Int {
        guard var stretcher = voice.stretcher else { return 0 }
        voice.stretcher = nil
        defer { voice.stretcher = stretcher }
        let count = frames.count
        let channels = AudioChunk.channelCount
        let generation = voice.generation
        let rate = min(max(voice.step, TimeStretcher.rates.lowerBound), TimeStretcher.rates.upperBound)
        var stretched = stretchOutput
        stretchOutput = []
        defer { stretchOutput = stretched }
        stretched.removeAll(keepingCapacity: true)
        if stretched.capacity < count * channels { stretched.reserveCapacity(count * channels) }
        var wanted = 0, found = 0
        var buffer = stretchRead
        stretchRead = []
        defer { stretchRead = buffer }
        do {
            try stretcher.render(frameCount: count, at: voice.position, rate: rate, grid: voice.grid, into: &stretched) { start, frames, into in
                wanted += frames
                found += source.read(generation: generation, from: start, count: frames, into: &buffer)
                // The store's samples are Int16 divided by 32768: back to Int16 exactly.
                buffer.withUnsafeBufferPointer { buffer in
                    for index in 0..<(frames * channels) { into.append(Int16(buffer[index] * 32768)) }
                }
            }
        } catch {
            // A position or rate the stretch cannot take: silence, the position moving on.
            voice.position += voice.step * Double(count)
            return count
        }
        for index in 0..<min(count, stretched.count / channels) {
            let level = gain(voice.fade.map { $0 + index })
            let out = (frames.lowerBound + index) * channels
            for channel in 0..<channels {
                samples[out + channel] += Float(stretched[index * channels + channel]) / 32768 * level
            }
        }
        voice.position = stretcher.position
        voice.landing = nil
        return min(count, max(0, wanted - found))
    }
}
