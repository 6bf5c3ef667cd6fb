import Testing
import TandemClock
@testable import TandemMedia

/// Rewriting what an output wrote ahead when the timeline changes under it, on made-up frames
/// and instants: where it rewrites from, what counts as a change, and that the core, put back
/// in its state at an earlier render, renders what it would have rendered had it known.
@Suite struct OutputRewriteTests {
    static let second: Int64 = 1_000_000_000
    static let period = 1e9 / 48_000

    static func starts(_ frames: [Int64]) -> OutputRewrite.Starts {
        var starts = OutputRewrite.Starts()
        for frame in frames { starts.add(.init(frame: frame, instant: LocalInstant(nanoseconds: frame * 1_000))) }
        return starts
    }

    @Test func aChangePastTheSafeFrameIsRewrittenFromTheRenderThatWroteIt() throws {
        // Renders started at 0, 960, 1920; 2880 written; the server may have taken up to 1000.
        let plan = try #require(OutputRewrite.plan(starts: Self.starts([0, 960, 1920]), written: 2880, safe: 1000,
                                                   change: 2000, maximumFrames: 24_000))
        #expect(plan.start.frame == 1920)
        #expect(plan.from == 1920)
    }

    @Test func aChangeBeforeTheSafeFrameIsRewrittenFromTheSafeFrame() throws {
        // The change's frame is already taken: what can still change changes from the safe frame,
        // rendered from the render before it.
        let plan = try #require(OutputRewrite.plan(starts: Self.starts([0, 960, 1920]), written: 2880, safe: 1500,
                                                   change: 1200, maximumFrames: 24_000))
        #expect(plan.start.frame == 960)
        #expect(plan.from == 1500)
        // A change between the render's start and the safe frame alike.
        let later = try #require(OutputRewrite.plan(starts: Self.starts([0, 960, 1920]), written: 2880, safe: 1000,
                                                    change: 1919, maximumFrames: 24_000))
        #expect(later.start.frame == 960)
        #expect(later.from == 1000)
    }

    @Test func nothingIsRewrittenWhenNothingWrittenChangesOrItCannotBe() {
        let starts = Self.starts([0, 960, 1920])
        // The change's frame is not written yet: the next write renders it in time.
        #expect(OutputRewrite.plan(starts: starts, written: 2880, safe: 1000, change: 2880, maximumFrames: 24_000) == nil)
        // The server may have taken everything written (an underrun).
        #expect(OutputRewrite.plan(starts: starts, written: 2880, safe: 2880, change: 100, maximumFrames: 24_000) == nil)
        // No render kept starts at or before the frame.
        #expect(OutputRewrite.plan(starts: Self.starts([960, 1920]), written: 2880, safe: 100, change: 500, maximumFrames: 24_000) == nil)
        // More to render again than a render gives.
        #expect(OutputRewrite.plan(starts: starts, written: 2880, safe: 100, change: 500, maximumFrames: 2000) == nil)
    }

    @Test func theStartsKeepTheLatestAndARenderForgetsThoseItRendersOver() {
        var starts = OutputRewrite.Starts(capacity: 3)
        for frame: Int64 in [0, 100, 200, 300] { starts.add(.init(frame: frame, instant: LocalInstant(nanoseconds: frame))) }
        #expect(starts.entries.map(\.frame) == [100, 200, 300])
        starts.add(.init(frame: 200, instant: LocalInstant(nanoseconds: 7)))
        #expect(starts.entries.map(\.frame) == [100, 200])
        #expect(starts.entries.last?.instant == LocalInstant(nanoseconds: 7))
    }

    @Test func aScheduleDiffersFromTheChangeItAddsAndNotFromChangesComingIntoForce() {
        var old = TimelineSchedule(PresentationTimeline(rate: 1, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: Self.second)))
        old.schedule(.paused(at: .init(nanoseconds: Self.second), from: .init(nanoseconds: 2 * Self.second)), discontinuous: false, now: .init(nanoseconds: Self.second))
        // The same schedule, the pause come into force: no difference from any instant.
        var promoted = old
        promoted.advance(to: .init(nanoseconds: 2 * Self.second))
        #expect(promoted != old)
        #expect(promoted.firstDifference(from: old, notBefore: .init(nanoseconds: 2 * Self.second)) == nil)
        #expect(old.firstDifference(from: old, notBefore: .init(nanoseconds: Self.second)) == nil)
        // A seek scheduled before the pause: different from the seek's instant on.
        var seek = old
        let seekAt = Self.second + 500_000_000
        seek.schedule(PresentationTimeline(rate: 1, anchorItemTime: .init(nanoseconds: 10 * Self.second), anchorHostTime: .init(nanoseconds: seekAt)),
                      discontinuous: true, now: .init(nanoseconds: Self.second))
        #expect(seek.firstDifference(from: old, notBefore: .init(nanoseconds: Self.second)) == .init(nanoseconds: seekAt))
        // Asked from after its instant: different at once.
        #expect(seek.firstDifference(from: old, notBefore: .init(nanoseconds: seekAt + 1_000)) == .init(nanoseconds: seekAt + 1_000))
        // A rate change in force at once (its instant past): different from the earliest instant asked.
        var rate = old
        rate.schedule(PresentationTimeline(rate: 1.5, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: Self.second)), discontinuous: false,
                      now: .init(nanoseconds: Self.second + 1))
        #expect(rate.firstDifference(from: old, notBefore: .init(nanoseconds: Self.second + 10)) == .init(nanoseconds: Self.second + 10))
    }

    /// Renders `requests` of 480 frames from 1 s on `schedule`, resuming before request `resumeAt`
    /// from the state kept at its start, under `rewritten` from then on.
    static func render(_ schedule: TimelineSchedule, rewritten: TimelineSchedule? = nil, resumeAt: Int = 0,
                       requests: Int) -> [Float] {
        var core = AudioPlayoutCore()
        var samples: [Float] = []
        var kept: AudioPlayoutCore.State?
        var held = TimeStretcher()
        for index in 0..<requests {
            if index == resumeAt { kept = core.resumable(keepingStretchIn: &held) }
            let request = AudioPlayoutCore.Request(frames: 480, firstInstant: LocalInstant(nanoseconds: Self.second + Int64((Double(index * 480) * period).rounded())),
                                                   framePeriod: period)
            samples += core.render(request, schedule: schedule, latencyOffset: .zero, source: Source()).samples
        }
        guard let rewritten, let state = kept else { return samples }
        // Written again from request `resumeAt` on, under the new schedule.
        core.resume(state, stretch: held)
        samples.removeSubrange((resumeAt * 480 * 2)...)
        for index in resumeAt..<requests {
            let request = AudioPlayoutCore.Request(frames: 480, firstInstant: LocalInstant(nanoseconds: Self.second + Int64((Double(index * 480) * period).rounded())),
                                                   framePeriod: period)
            samples += core.render(request, schedule: rewritten, latencyOffset: .zero, source: Source()).samples
        }
        return samples
    }

    /// The left channel says which media frame, the right which generation.
    struct Source: AudioFrameSource {
        func read(generation: Int, from start: Int64, count: Int, into destination: inout [Float]) -> Int {
            if destination.count < count * 2 { destination = [Float](repeating: 0, count: count * 2) }
            for index in 0..<count {
                let frame = start + Int64(index)
                destination[index * 2] = frame >= 0 ? Float(frame) / 1_048_576 : 0
                destination[index * 2 + 1] = frame >= 0 ? Float(generation + 1) / 8 : 0
            }
            return count
        }

        func decodedEnd(generation: Int, from frame: Int64) -> Int64? { .max / 4 }
    }

    /// A seek, a pause and a rate change heard after the frames of their instants were rendered:
    /// rendered again from the render that wrote the instant, the core put back in its state
    /// there, every frame is what a core that knew of the change in time rendered.
    @Test(arguments: ["seek", "pause", "rate", "stretched seek", "stretched rate", "stretched to 1"])
    func aChangeRenderedAgainFromAnEarlierStateSoundsAsIfHeardInTime(_ change: String) {
        // From a stretched voice (at 1.5) too: its stretch's state is kept apart and resumed.
        let rate = change.hasPrefix("stretched") ? 1.5 : 1
        let old = TimelineSchedule(PresentationTimeline(rate: rate, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: Self.second - 5_000_000)))
        var new = old
        // In the third request (from 1.02 s), at 1.025 s.
        let at = Self.second + 25_000_000
        switch change {
        case "stretched rate": new.schedule(PresentationTimeline(rate: 0.75, anchorItemTime: .init(nanoseconds: 45_000_000), anchorHostTime: .init(nanoseconds: at)),
                                            discontinuous: false, now: .init(nanoseconds: Self.second))
        case "stretched to 1": new.schedule(PresentationTimeline(rate: 1, anchorItemTime: .init(nanoseconds: 45_000_000), anchorHostTime: .init(nanoseconds: at)),
                                            discontinuous: false, now: .init(nanoseconds: Self.second))
        case "seek", "stretched seek": new.schedule(PresentationTimeline(rate: 1, anchorItemTime: .init(nanoseconds: 10 * Self.second), anchorHostTime: .init(nanoseconds: at)),
                                  discontinuous: true, now: .init(nanoseconds: Self.second))
        case "pause": new.schedule(.paused(at: .init(nanoseconds: 30_000_000), from: .init(nanoseconds: at)), discontinuous: false, now: .init(nanoseconds: Self.second))
        default: new.schedule(PresentationTimeline(rate: 1.5, anchorItemTime: .init(nanoseconds: 30_000_000), anchorHostTime: .init(nanoseconds: at)),
                              discontinuous: false, now: .init(nanoseconds: Self.second))
        }
        let inTime = Self.render(new, requests: 6)
        let rewritten = Self.render(old, rewritten: new, resumeAt: 2, requests: 6)
        let late = Self.render(old, requests: 6)
        #expect(rewritten == inTime)
        #expect(late != inTime, "the old schedule plays differently after the change")
    }

    /// A stretched voice's state keeps its stretch apart, in a stretcher of the caller's (a copy
    /// of the voice would share the stretch's buffers, and the next request would copy them).
    @Test func aStretchedVoiceKeepsItsStretchApart() {
        var core = AudioPlayoutCore()
        let schedule = TimelineSchedule(PresentationTimeline(rate: 1.5, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: Self.second)))
        #expect(core.resumable != nil)
        let request = AudioPlayoutCore.Request(frames: 480, firstInstant: LocalInstant(nanoseconds: Self.second), framePeriod: Self.period)
        _ = core.render(request, schedule: schedule, latencyOffset: .zero, source: Source())
        #expect(core.voice?.stretcher != nil)
        #expect(core.resumable == nil)
        var held = TimeStretcher()
        let state = core.resumable(keepingStretchIn: &held)
        #expect(state?.stretched == true)
        #expect(state?.voice?.stretcher == nil)
        #expect(held.position == core.voice?.stretcher?.position)
    }
}
