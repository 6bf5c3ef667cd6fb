import Foundation
import Testing
@testable import TandemMedia
import TandemClock

/// A source whose left channel says which media frame it is (frame / 2^20) and whose right
/// channel says which generation: any output sample tells what was read.
private struct TaggedSource: AudioFrameSource {
    static let scale: Float = 1_048_576
    func read(generation: Int, from start: Int64, count: Int, into destination: inout [Float]) -> Int {
        if destination.count < count * 2 { destination = [Float](repeating: 0, count: count * 2) }
        for index in 0..<count {
            let frame = start + Int64(index)
            destination[index * 2] = frame >= 0 ? Float(frame) / TaggedSource.scale : 0
            destination[index * 2 + 1] = frame >= 0 ? Float(generation + 1) / 8 : 0
        }
        return count
    }

    func decodedEnd(generation: Int, from frame: Int64) -> Int64? { .max / 4 }
}

/// As `TaggedSource`, with each generation decoded only up to a media frame (`ends`, exclusive;
/// a generation not named is decoded throughout): a decoder catching up with a seek.
private struct CatchingUpSource: AudioFrameSource {
    var ends: [Int: Int64]
    func read(generation: Int, from start: Int64, count: Int, into destination: inout [Float]) -> Int {
        _ = TaggedSource().read(generation: generation, from: start, count: count, into: &destination)
        guard let end = ends[generation] else { return count }
        for index in 0..<count where start + Int64(index) >= end {
            destination[index * 2] = 0
            destination[index * 2 + 1] = 0
        }
        return max(0, min(count, Int(end - start)))
    }

    func decodedEnd(generation: Int, from frame: Int64) -> Int64? {
        guard let end = ends[generation] else { return .max / 4 }
        return frame < end ? end : nil
    }
}

/// Noise on the left channel (so that the stretch's search has something to match), and on the
/// right which media frame it is (frame / 2^20).
private struct NoiseTaggedSource: AudioFrameSource {
    func read(generation: Int, from start: Int64, count: Int, into destination: inout [Float]) -> Int {
        if destination.count < count * 2 { destination = [Float](repeating: 0, count: count * 2) }
        for index in 0..<count {
            let frame = start + Int64(index)
            var state = UInt64(bitPattern: frame) &* 0x9E37_79B9_7F4A_7C15
            state ^= state >> 29
            state &*= 0xBF58_476D_1CE4_E5B9
            state ^= state >> 32
            destination[index * 2] = Float(Int16(truncatingIfNeeded: state) / 4) / 32768
            destination[index * 2 + 1] = frame >= 0 ? Float(frame) / TaggedSource.scale : 0
        }
        return count
    }

    func decodedEnd(generation: Int, from frame: Int64) -> Int64? { .max / 4 }
}

/// The sound output's decisions on made-up instants: which media frame each output frame plays.
@Suite struct AudioPlayoutCoreTests {
    static let second: Int64 = 1_000_000_000
    static let period = 1e9 / 48_000

    /// Runs consecutive requests of `frames` from `start`, one every `period`; returns every output sample.
    static func run(_ core: inout AudioPlayoutCore, schedule: TimelineSchedule, from start: Double, requests: Int,
                    frames: Int = 480, period: Double = period, offset: TimeSpan = .zero,
                    each: (AudioPlayoutCore.Rendered, Double, AudioPlayoutCore) -> Void = { _, _, _ in }) -> [Float] {
        var samples: [Float] = []
        var instant = start
        for _ in 0..<requests {
            let request = AudioPlayoutCore.Request(frames: frames, firstInstant: LocalInstant(nanoseconds: Int64(instant.rounded())),
                                                   framePeriod: period)
            let rendered = core.render(request, schedule: schedule, latencyOffset: offset, source: TaggedSource())
            each(rendered, instant, core)
            samples += rendered.samples
            instant += Double(frames) * period
        }
        return samples
    }

    @Test func silenceWhilePaused() {
        var core = AudioPlayoutCore()
        let schedule = TimelineSchedule(.paused(at: .init(nanoseconds: 5 * Self.second), from: .zero))
        var writes = 0
        let samples = Self.run(&core, schedule: schedule, from: Double(Self.second), requests: 5) { rendered, _, _ in
            if rendered.write != nil { writes += 1 }
        }
        #expect(samples.allSatisfy { $0 == 0 })
        #expect(writes == 0)
    }

    @Test func playOnWholeFramesPassesSamplesBitExact() {
        var core = AudioPlayoutCore()
        // Playing from media 0 at 1 s + 0.125 ms: output frame 6 falls on it exactly.
        let anchor = Self.second + 125_000
        var schedule = TimelineSchedule(.paused(at: .zero, from: .zero))
        schedule.schedule(PresentationTimeline(rate: 1, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: anchor)), discontinuous: false, now: .zero)
        var corrections: [Double] = []
        let samples = Self.run(&core, schedule: schedule, from: Double(Self.second), requests: 20) { rendered, _, _ in
            if let write = rendered.write { corrections.append(write.correction) }
        }
        for frame in 0..<6 { #expect(samples[frame * 2 + 1] == 0) }
        // After the 96-frame fade-in, frame k plays media frame k − 6, exactly as decoded.
        for frame in (6 + 96)..<(20 * 480) {
            #expect(samples[frame * 2] == Float(frame - 6) / TaggedSource.scale, "frame \(frame)")
        }
        #expect(corrections.allSatisfy { $0 == 0 })
    }

    @Test func playStartsAtItsInstantOnTheTimelinesPositionBetweenFrames() {
        var core = AudioPlayoutCore()
        // Playing from media 0 at 1 s + 0.1 ms: the fifth output frame (at 104.2 µs) is the first
        // at or after it, and plays media 0.2, the timeline's position there.
        let anchor = Self.second + 100_000
        var schedule = TimelineSchedule(.paused(at: .zero, from: .zero))
        schedule.schedule(PresentationTimeline(rate: 1, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: anchor)), discontinuous: false, now: .zero)
        var first: AudioPlayoutCore.Write?
        let samples = Self.run(&core, schedule: schedule, from: Double(Self.second), requests: 3) { rendered, _, _ in
            if first == nil { first = rendered.write }
        }
        for frame in 0..<5 { #expect(samples[frame * 2 + 1] == 0) }
        #expect(samples[5 * 2 + 1] != 0)
        // After the 96-frame fade-in, frame k plays media k − 4.8, read between frames.
        for frame in (5 + 96)..<1440 {
            let heard = Double(samples[frame * 2] * TaggedSource.scale)
            #expect(abs(heard - (Double(frame) - 4.8)) < 1e-3, "frame \(frame) heard media \(heard)")
        }
        // The fade-in rises from its first frame.
        #expect(samples[5 * 2 + 1] > 0 && samples[5 * 2 + 1] < samples[50 * 2 + 1] && samples[50 * 2 + 1] < samples[100 * 2 + 1])
        let write = try! #require(first)
        #expect(abs(write.media - 0.2) < 1e-3)
        // The output plays media 0.2 at its fifth frame, when the timeline means it to: no rounding onto a frame.
        #expect(abs(write.intended.nanoseconds - (Self.second + 104_167)) <= 1)
        #expect(abs(write.expected.nanoseconds - (Self.second + 104_167)) <= 1)
        #expect(abs(write.correction) < 1e-6)
    }

    @Test func aTimelineAnchoredLaterIsSilentUntilItsAnchor() {
        var core = AudioPlayoutCore()
        // A player opened to play from media 0 at 1.01 s: nothing before, media 0 from output frame 480.
        let schedule = TimelineSchedule(PresentationTimeline(rate: 1, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: Self.second + 10_000_000)))
        var first: AudioPlayoutCore.Write?
        let samples = Self.run(&core, schedule: schedule, from: Double(Self.second), requests: 2) { rendered, _, _ in
            if first == nil { first = rendered.write }
        }
        for frame in 0..<480 { #expect(samples[frame * 2 + 1] == 0) }
        #expect(samples[480 * 2 + 1] != 0)
        #expect(first?.media == 0)
    }

    @Test func pauseTakesEffectAtItsInstantWithAFadeAndThenSilence() {
        var core = AudioPlayoutCore()
        var schedule = TimelineSchedule(PresentationTimeline(rate: 1, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: Self.second)))
        // Paused at local 1.01 s (media 10 ms), scheduled ahead.
        let pause = Self.second + 10_000_000
        schedule.schedule(.paused(at: .init(nanoseconds: 10_000_000), from: .init(nanoseconds: pause)), discontinuous: false, now: .init(nanoseconds: Self.second))
        let samples = Self.run(&core, schedule: schedule, from: Double(Self.second), requests: 4)
        let pauseFrame = 480
        // Up to the pause the media plays (past the fade-in); from it, a fade: lower at once, silent after 96 frames.
        #expect(samples[(pauseFrame - 1) * 2] == Float(pauseFrame - 1) / TaggedSource.scale)
        #expect(samples[pauseFrame * 2 + 1] < samples[(pauseFrame - 1) * 2 + 1])
        #expect(samples[(pauseFrame + 48) * 2 + 1] > 0)
        for frame in (pauseFrame + 96)..<1920 { #expect(samples[frame * 2] == 0 && samples[frame * 2 + 1] == 0) }
    }

    @Test func seekPlaysTheNewPositionFromItsInstantAndNothingStaleAfterTheFade() {
        var core = AudioPlayoutCore()
        var schedule = TimelineSchedule(PresentationTimeline(rate: 1, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: Self.second)))
        // At local 1.02 s, a seek to media 10 s: a new generation.
        let seek = Self.second + 20_000_000
        let generation = schedule.schedule(PresentationTimeline(rate: 1, anchorItemTime: .init(nanoseconds: 10 * Self.second), anchorHostTime: .init(nanoseconds: seek)),
                                           discontinuous: true, now: .init(nanoseconds: Self.second))
        #expect(generation == 1)
        let samples = Self.run(&core, schedule: schedule, from: Double(Self.second), requests: 6)
        let seekFrame = 960
        #expect(samples[(seekFrame - 1) * 2 + 1] == 1.0 / 8)
        // From the seek's frame the new generation sounds (fading in) while the old fades out.
        for frame in (seekFrame + 96)..<2880 {
            #expect(samples[frame * 2 + 1] == 2.0 / 8, "frame \(frame) still plays the old position")
            #expect(samples[frame * 2] == Float(480_000 + frame - seekFrame) / TaggedSource.scale)
        }
    }

    /// A seek whose target is decoded only 10 ms ahead when the output renders it: a request that
    /// may be held back renders up to what is decoded and stops; the next, once more is decoded,
    /// goes on from there without a frame missing or repeated. Frames due too soon to wait for
    /// (before `holdsBackFrom`) are rendered all the same, silent where not decoded.
    @Test func aStartNotYetDecodedIsHeldBackAndGoesOnWhereItStopped() {
        var schedule = TimelineSchedule(PresentationTimeline(rate: 1, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: Self.second)))
        let seek = Self.second + 20_000_000
        schedule.schedule(PresentationTimeline(rate: 1, anchorItemTime: .init(nanoseconds: 10 * Self.second), anchorHostTime: .init(nanoseconds: seek)),
                          discontinuous: true, now: .init(nanoseconds: Self.second))
        let target: Int64 = 480_000
        func request(_ frames: Int, at frame: Int, holdingFrom: Int?) -> AudioPlayoutCore.Request {
            AudioPlayoutCore.Request(frames: frames, firstInstant: LocalInstant(nanoseconds: Int64((Double(Self.second) + Double(frame) * Self.period).rounded())),
                                     framePeriod: Self.period, holdsBackFrom: holdingFrom)
        }
        var core = AudioPlayoutCore()
        // 960 output frames of the old position, then the seek's instant; 480 frames decoded past the target.
        var source = CatchingUpSource(ends: [1: target + 480])
        let first = core.render(request(1_920, at: 0, holdingFrom: 0), schedule: schedule, latencyOffset: .zero, source: source)
        #expect(first.heldBack)
        let firstFrames = first.samples.count / 2
        #expect(firstFrames > 960 + 400 && firstFrames <= 960 + 478, "\(firstFrames) frames")
        #expect(first.missingFrames == 0)
        // Decoded now: the rest is written from where the first write stopped.
        source.ends[1] = target + 48_000
        let second = core.render(request(1_920 - firstFrames, at: firstFrames, holdingFrom: 0), schedule: schedule,
                                 latencyOffset: .zero, source: source)
        #expect(!second.heldBack && second.missingFrames == 0)
        let samples = first.samples + second.samples
        for frame in (960 + 96)..<1920 {
            #expect(samples[frame * 2] == Float(target + Int64(frame - 960)) / TaggedSource.scale, "frame \(frame)")
        }

        // Due too soon to hold back: everything is rendered, the undecoded part silent.
        var due = AudioPlayoutCore()
        let soon = CatchingUpSource(ends: [1: target + 480])
        let rendered = due.render(request(1_920, at: 0, holdingFrom: 1_920), schedule: schedule, latencyOffset: .zero, source: soon)
        #expect(!rendered.heldBack && rendered.samples.count == 1_920 * 2)
        #expect(rendered.missingFrames > 400)
    }

    /// Past a voice's first `holdBackWindow` frames a shortfall is not held back: the output
    /// keeps its buffer full, silent where the decoder is behind.
    @Test func aShortfallLongAfterAStartIsNotHeldBack() {
        let schedule = TimelineSchedule(PresentationTimeline(rate: 1, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: Self.second)))
        var core = AudioPlayoutCore()
        let source = CatchingUpSource(ends: [0: 9_600])
        var frame = 0
        var held: [Int] = []
        while frame < 14_400 {
            let request = AudioPlayoutCore.Request(frames: 960, firstInstant: LocalInstant(nanoseconds: Int64((Double(Self.second) + Double(frame) * Self.period).rounded())),
                                                   framePeriod: Self.period, holdsBackFrom: 0)
            let rendered = core.render(request, schedule: schedule, latencyOffset: .zero, source: source)
            if rendered.heldBack { held.append(frame) }
            frame += max(1, rendered.samples.count / 2)
        }
        #expect(held.isEmpty, "held back at \(held)")
    }

    @Test func rateChangeStretchesFromItsInstantOnTheTimeline() {
        var core = AudioPlayoutCore()
        var schedule = TimelineSchedule(PresentationTimeline(rate: 1, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: Self.second)))
        let change = Self.second + 10_000_000
        schedule.schedule(PresentationTimeline(rate: 2, anchorItemTime: .init(nanoseconds: 10_000_000), anchorHostTime: .init(nanoseconds: change)),
                          discontinuous: false, now: .init(nanoseconds: Self.second))
        let samples = Self.run(&core, schedule: schedule, from: Double(Self.second), requests: 4)
        #expect(samples[479 * 2] == Float(479) / TaggedSource.scale)
        // From the change on, the stretch (pitch kept): past the cross-fade, every frame heard is
        // within the stretch's bound of the timeline's position, 480 + 2 × (frame − 480).
        let bound = TimeStretcher().sourceErrorBound(rate: 2)
        for frame in (480 + 96)..<1920 {
            let heard = Double(samples[frame * 2] * TaggedSource.scale)
            #expect(abs(heard - Double(480 + 2 * (frame - 480))) <= bound + 1, "frame \(frame) heard media \(heard)")
            #expect(samples[frame * 2 + 1] == 1.0 / 8)
        }
        // Its nominal position stays on the timeline.
        #expect(core.voice?.position == Double(480 + 2 * (1920 - 480)))
    }

    @Test func latencyOffsetMovesTheSoundAsItMovesThePictures() {
        var core = AudioPlayoutCore()
        var schedule = TimelineSchedule(.paused(at: .zero, from: .zero))
        let anchor = Self.second + 20_000_000
        schedule.schedule(PresentationTimeline(rate: 1, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: anchor)), discontinuous: false, now: .zero)
        // 10 ms earlier than the timeline gives it: the start is at output frame 480, not 960.
        let samples = Self.run(&core, schedule: schedule, from: Double(Self.second), requests: 3, offset: .milliseconds(10))
        #expect(samples[479 * 2 + 1] == 0)
        #expect(samples[480 * 2 + 1] != 0)
    }

    /// The error the core leaves: the media frame it reads minus the timeline's at that instant.
    static func error(of core: AudioPlayoutCore, timeline: PresentationTimeline, at instant: Double) -> Double {
        let target = (Double(timeline.anchorMediaTime) + timeline.rate * (instant - Double(timeline.anchorLocalTime))) * 48_000 / 1e9
        return (core.voice?.position ?? .nan) - target
    }

    @Test(arguments: [100.0, -100.0, 40.0])
    func anOutputClockDriftingIsFollowedExactlyByTheReadingRate(ppm: Double) {
        var core = AudioPlayoutCore()
        let timeline = PresentationTimeline(rate: 1, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: Self.second))
        let schedule = TimelineSchedule(timeline)
        // The output's frames come `ppm` faster or slower than the media's 48 kHz.
        let period = Self.period * (1 - ppm / 1e6)
        var worst = 0.0, snaps = 0
        var corrections: [Double] = []
        _ = Self.run(&core, schedule: schedule, from: Double(Self.second), requests: 500, period: period) { rendered, instant, core in
            snaps += rendered.snaps.count
            guard let write = rendered.write else { return }
            corrections.append(write.correction)
            let end = instant + 480 * period
            worst = max(worst, abs(Self.error(of: core, timeline: timeline, at: end)))
        }
        #expect(snaps == 0)
        // On the timeline at the end of every request, to the instants' rounding (a nanosecond
        // is 0.00005 frame), rather than within half a frame of it.
        #expect(worst <= 1e-3, "the output strayed \(worst) frames")
        // Every request reads at the output's rate against the media's: −ppm, and nothing else.
        #expect(corrections.allSatisfy { abs($0 + ppm / 1e6) < 1e-6 }, "\(corrections.prefix(5))")
    }

    @Test(arguments: [1.0001, 0.9999])
    func aTimelineDriftingFromRateOneIsFollowedByTheReadingRateNotByAStretch(rate: Double) {
        var core = AudioPlayoutCore()
        // The session's clock runs 100 ppm off the local one: the timeline's rate in local time is 1 ± 100 ppm.
        let timeline = PresentationTimeline(rate: rate, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: Self.second))
        var worst = 0.0, snaps = 0
        var corrections: [Double] = []
        var heard: [Double] = []
        var samples: [Float] = []
        _ = Self.run(&core, schedule: TimelineSchedule(timeline), from: Double(Self.second), requests: 500) { rendered, instant, core in
            snaps += rendered.snaps.count
            samples += rendered.samples
            guard let write = rendered.write else { return }
            corrections.append(write.correction)
            worst = max(worst, abs(Self.error(of: core, timeline: timeline, at: instant + 480 * Self.period)))
        }
        #expect(core.voice?.stretcher == nil)
        #expect(snaps == 0)
        #expect(worst <= 1e-3, "the output strayed \(worst) frames")
        #expect(corrections.allSatisfy { abs($0 - (rate - 1)) < 1e-6 }, "\(corrections.prefix(5))")
        // Every frame heard (past the fade-in) is the timeline's position at its instant: media
        // (rate × frame), read between frames, however far the fraction has turned (in the first
        // 100 ms, where the tagged samples resolve better than a thousandth of a frame), well inside the half
        // frame a rounding onto whole frames would leave.
        for frame in stride(from: 96, to: 4_800, by: 7) {
            heard.append(Double(samples[frame * 2] * TaggedSource.scale) - rate * Double(frame))
        }
        #expect(heard.allSatisfy { abs($0) < 0.01 }, "largest \(heard.map(abs).max() ?? 0)")
    }

    /// A stretch at 0.75 back to rate 1, heard 20 ms after its instant (the output had rendered
    /// past it at 0.75, 5 ms of media behind): the voice at rate 1 starts on the timeline, within
    /// half a frame, with no snap, rather than 5 ms behind and drifting back at ±0.5 %.
    @Test func aLateReturnToRateOneLandsOnTheTimelineAtOnce() {
        var core = AudioPlayoutCore()
        let slow = PresentationTimeline(rate: 0.75, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: Self.second))
        _ = Self.run(&core, schedule: TimelineSchedule(slow), from: Double(Self.second), requests: 20)
        // 200 ms rendered at 0.75; the return to 1 took effect at 180 ms.
        let change = Self.second + 180_000_000
        let back = PresentationTimeline(rate: 1, anchorItemTime: .init(nanoseconds: 135_000_000), anchorHostTime: .init(nanoseconds: change))
        var schedule = TimelineSchedule(slow)
        schedule.schedule(back, discontinuous: false, now: .init(nanoseconds: Self.second))
        var snaps = 0
        var errors: [Double] = []
        _ = Self.run(&core, schedule: schedule, from: Double(Self.second) + 20 * 480 * Self.period, requests: 5) { rendered, instant, core in
            snaps += rendered.snaps.count
            errors.append(Self.error(of: core, timeline: back, at: instant + 480 * Self.period))
        }
        #expect(snaps == 0)
        #expect(core.voice?.stretcher == nil)
        #expect(errors.allSatisfy { abs($0) <= 0.5 }, "errors after the return, in frames: \(errors)")
    }

    @Test func aLateChangeBetweenStretchedRatesLandsOnTheTimelineAtOnce() {
        var core = AudioPlayoutCore()
        let fast = PresentationTimeline(rate: 1.5, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: Self.second))
        _ = Self.run(&core, schedule: TimelineSchedule(fast), from: Double(Self.second), requests: 20)
        // 200 ms rendered at 1.5; the change to 0.75 took effect at 180 ms (30 ms of media back).
        let change = Self.second + 180_000_000
        let slow = PresentationTimeline(rate: 0.75, anchorItemTime: .init(nanoseconds: 270_000_000), anchorHostTime: .init(nanoseconds: change))
        var schedule = TimelineSchedule(fast)
        schedule.schedule(slow, discontinuous: false, now: .init(nanoseconds: Self.second))
        var errors: [Double] = []
        var snaps = 0
        _ = Self.run(&core, schedule: schedule, from: Double(Self.second) + 20 * 480 * Self.period, requests: 5) { rendered, instant, core in
            snaps += rendered.snaps.count
            errors.append(Self.error(of: core, timeline: slow, at: instant + 480 * Self.period))
        }
        // 30 ms of media at 0.75 is 40 ms of output, beyond the snap's threshold: the change's
        // cross-fade all the same, not counted as a snap.
        #expect(snaps == 0)
        // Stretching at 0.75 on the new timeline's grid, at its position from the first request on.
        #expect(core.voice?.stretcher != nil)
        #expect(core.voice?.grid == TimeStretcher.Grid(origin: 270_000_000 * 48_000 / 1e9, rate: 0.75))
        #expect(errors.allSatisfy { abs($0) <= 0.5 }, "errors after the change, in frames: \(errors)")
    }

    @Test func largeErrorIsCorrectedByRateWithinHalfAPercent() {
        var core = AudioPlayoutCore()
        var schedule = TimelineSchedule(PresentationTimeline(rate: 1, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: Self.second)))
        _ = Self.run(&core, schedule: schedule, from: Double(Self.second), requests: 10)
        // The timeline moves 5 ms later (the session clock's estimate moved): a continuous change.
        let moved = PresentationTimeline(rate: 1, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: Self.second + 5_000_000))
        schedule.schedule(moved, discontinuous: false, now: .init(nanoseconds: Self.second + 100_000_000))
        var largest = 0.0, snaps = 0
        var errors: [Double] = []
        _ = Self.run(&core, schedule: schedule, from: Double(Self.second) + 480 * 10 * Self.period, requests: 250) { rendered, instant, core in
            snaps += rendered.snaps.count
            largest = max(largest, abs(rendered.write?.correction ?? 0))
            errors.append(Self.error(of: core, timeline: moved, at: instant + 480 * Self.period))
        }
        #expect(snaps == 0)
        #expect(largest <= 0.005 + 1e-12)
        #expect(largest > 0.004, "a 5 ms error is corrected at the full rate")
        // 5 ms at 0.5 % takes a second; after 2.5 s the error is within the dead band.
        #expect(abs(errors[0]) > 200)
        #expect(abs(errors.last!) <= 0.5 + 1e-6)
    }

    @Test func errorBeyondTheThresholdSnapsWithAFade() {
        var core = AudioPlayoutCore()
        var schedule = TimelineSchedule(PresentationTimeline(rate: 1, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: Self.second)))
        _ = Self.run(&core, schedule: schedule, from: Double(Self.second), requests: 10)
        // 30 ms later, at once (after a stall, say).
        let moved = PresentationTimeline(rate: 1, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: Self.second + 30_000_000))
        schedule.schedule(moved, discontinuous: false, now: .init(nanoseconds: Self.second + 100_000_000))
        var snaps: [AudioPlayoutCore.Snap] = []
        let start = Double(Self.second) + 4800 * Self.period
        let samples = Self.run(&core, schedule: schedule, from: start, requests: 2) { rendered, _, _ in snaps += rendered.snaps }
        #expect(snaps.count == 1)
        #expect(abs(snaps[0].error.nanoseconds - 30_000_000) < 30_000)
        #expect(abs(Self.error(of: core, timeline: moved, at: start + 960 * Self.period)) <= 0.5)
        // After the fade, the new position alone: media frame (4800 + k) − 1440.
        for frame in 96..<960 { #expect(samples[frame * 2] == Float(4800 + frame - 1440) / TaggedSource.scale) }
    }

    @Test func itemSwitchFollowsTheQueueWithoutAGap() {
        var core = AudioPlayoutCore()
        // The first item ends at media 20 ms; at local 1.02 s the next item plays from its start (generation 1).
        var schedule = TimelineSchedule(PresentationTimeline(rate: 1, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: Self.second)))
        schedule.schedule(PresentationTimeline(rate: 1, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: Self.second + 20_000_000)),
                          discontinuous: true, now: .init(nanoseconds: Self.second))
        let samples = Self.run(&core, schedule: schedule, from: Double(Self.second), requests: 4)
        #expect(samples[959 * 2] == Float(959) / TaggedSource.scale)
        #expect(samples[960 * 2 + 1] > 0)
        for frame in (960 + 96)..<1920 { #expect(samples[frame * 2] == Float(frame - 960) / TaggedSource.scale) }
    }

    @Test func theInterpolatorIsExactOnWholeFramesAndFlatAndInPhaseAcrossTheAudibleBand() {
        let half = BandLimitedInterpolator.halfTaps
        let frames = 4 * half
        // Whole frames come back as they are, a constant as it is.
        let noise = (0..<(frames * 2)).map { Float(($0 * 7_919) % 2_001) / 1_000 - 1 }
        noise.withUnsafeBufferPointer { buffer in
            for center in half..<(frames - half) {
                #expect(BandLimitedInterpolator.value(buffer, center: center, fraction: 0, channel: 1, channels: 2) == noise[center * 2 + 1])
            }
        }
        let constant = [Float](repeating: 0.25, count: frames)
        constant.withUnsafeBufferPointer { buffer in
            #expect(abs(BandLimitedInterpolator.value(buffer, center: 2 * half, fraction: 0.37, channel: 0, channels: 1) - 0.25) < 1e-6)
        }
        // Sines up to 20 kHz read between frames land on the sine itself: neither attenuated nor
        // delayed by more than 0.1 % of their amplitude (a 4-point cubic is several % off at the
        // top of the band).
        for frequency in [100.0, 1_000, 5_000, 10_000, 15_000, 18_000, 20_000] {
            let omega = 2 * Double.pi * frequency / 48_000
            let sine = (0..<frames).map { Float(sin(omega * Double($0))) }
            var worst = 0.0
            sine.withUnsafeBufferPointer { buffer in
                for fraction in stride(from: 0.0, to: 1.0, by: 1.0 / 64) {
                    for center in [2 * half, 2 * half + 1, 2 * half + 3] {
                        let value = BandLimitedInterpolator.value(buffer, center: center, fraction: fraction, channel: 0, channels: 1)
                        worst = max(worst, abs(Double(value) - sin(omega * (Double(center) + fraction))))
                    }
                }
            }
            #expect(worst < 1e-3, "\(frequency) Hz: off by \(worst)")
        }
    }

    @Test(arguments: [1.5, 0.75])
    func participantsStretchTheSamePiecesWhateverTheirRequestsAndOutputClocks(rate: Double) {
        // The same timelines (a change to `rate` at 1.2 s); one output asks for 480 frames at a
        // time on an exact clock, the other for 441 from a third of a frame later, its clock
        // 200 ppm slow.
        var schedule = TimelineSchedule(PresentationTimeline(rate: 1, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: Self.second)))
        let change = Self.second + 200_000_000
        schedule.schedule(PresentationTimeline(rate: rate, anchorItemTime: .init(nanoseconds: 200_000_000), anchorHostTime: .init(nanoseconds: change)),
                          discontinuous: false, now: .init(nanoseconds: Self.second))
        func heard(start: Double, frames: Int, period: Double) -> [(instant: Double, media: Double)] {
            var core = AudioPlayoutCore()
            var result: [(instant: Double, media: Double)] = []
            var instant = start
            while instant < Double(Self.second) + 1.2e9 {
                let request = AudioPlayoutCore.Request(frames: frames, firstInstant: LocalInstant(nanoseconds: Int64(instant.rounded())),
                                                       framePeriod: period)
                let rendered = core.render(request, schedule: schedule, latencyOffset: .zero, source: NoiseTaggedSource())
                for frame in 0..<frames {
                    result.append((instant + Double(frame) * period, Double(rendered.samples[frame * 2 + 1] * TaggedSource.scale)))
                }
                instant += Double(frames) * period
            }
            return result
        }
        let first = heard(start: Double(Self.second), frames: 480, period: Self.period)
        let second = heard(start: Double(Self.second) + Self.period / 3, frames: 441, period: Self.period * (1 + 200e-6))
        // From 100 ms after the change, each of the first's frames against the second's nearest
        // in time: the same media frame, within two, but at the pieces' cross-fades.
        var compared = 0, apart = 0
        var index = 0
        for (instant, media) in first where instant > Double(change) + 1e8 && instant < Double(Self.second) + 1.15e9 {
            while index + 1 < second.count && abs(second[index + 1].instant - instant) < abs(second[index].instant - instant) { index += 1 }
            compared += 1
            if abs(second[index].media - media) > 2 { apart += 1 }
        }
        #expect(compared > 40_000)
        // Cross-fades (8 ms of every 40) mix two places: at most a fifth of frames.
        #expect(Double(apart) < 0.21 * Double(compared), "\(apart) of \(compared) frames apart")
    }
}
