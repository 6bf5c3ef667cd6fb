import Synchronization
import Testing
import TandemClock
@testable import TandemMedia

/// The playout as its output's thread drives it: a render for every write, each reading the
/// player's schedule through the timing it was attached to.
@Suite struct AudioPlayoutTests {
    /// An output writes about 60 times a second: 300,000 renders are 80 minutes of sound. Each
    /// reads the player's timing; a reading that left the stored timing one closure deeper every
    /// time (a conversion wrapped around it and written back) would call down a chain as long as
    /// the renders so far, and overflow the thread's stack within these.
    @Test func aLongRunOfRendersReadsTheTimingAtTheSameDepth() {
        let playout = AudioPlayout(log: nil)
        let schedule = TimelineSchedule(.paused(at: .zero, from: .zero))
        playout.attach { (schedule, .zero) }
        var frames = 0
        for write in 0..<300_000 {
            let instant = LocalInstant(nanoseconds: Int64(write) * 20_833)
            frames += playout.render(frames: 1, instant: instant, period: 20_833, holding: instant).count / AudioChunk.channelCount
        }
        #expect(frames == 300_000)
    }

    /// While the player's lock is held (its timing gives nil), a write plays from the schedule
    /// read last rather than wait, or fall silent; before any reading it is silent.
    @Test func aBusyPlayerIsNotWaitedForAndItsLastScheduleIsPlayed() {
        let playout = AudioPlayout(log: nil)
        let schedule = TimelineSchedule(PresentationTimeline(rate: 1, anchorItemTime: .zero, anchorHostTime: .zero))
        let busy = Mutex(true)
        playout.attach { busy.withLock { $0 } ? nil : (schedule, .zero) }
        let period = 1e9 / 48_000
        func render(_ index: Int) -> [Float] {
            let instant = LocalInstant(nanoseconds: Int64(Double(index * 480) * period))
            // Nothing is decoded: rendered in full all the same (silent where missing), none held back.
            return playout.render(frames: 480, instant: instant, period: period, holding: instant + .seconds(1))
        }
        #expect(render(0).count == 480 * AudioChunk.channelCount)
        #expect(playout.statistics.writes == 0, "nothing read yet: silence")
        busy.withLock { $0 = false }
        _ = render(1)
        #expect(playout.statistics.writes == 1)
        busy.withLock { $0 = true }
        for index in 2..<5 { _ = render(index) }
        #expect(playout.statistics.writes == 4, "the last schedule played on while the lock was held")
    }

    /// The output asks, between writes, whether the timeline changed under what it wrote: the
    /// playout answers with the change's instant once (from the earliest instant asked), and
    /// puts its core back at the start of a kept render, forgetting the renders after it.
    @Test func aChangeUnderWhatWasRenderedIsToldOnceAndARenderCanBeResumed() {
        let playout = AudioPlayout(log: nil)
        let second: Int64 = 1_000_000_000
        let old = TimelineSchedule(PresentationTimeline(rate: 1, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: second)))
        let schedule = Mutex(old)
        playout.attach { (schedule.withLock { $0 }, .zero) }
        let period = 1e9 / 48_000
        func instant(_ index: Int) -> LocalInstant { LocalInstant(nanoseconds: second + Int64((Double(index * 480) * period).rounded())) }
        for index in 0..<3 { _ = playout.render(frames: 480, instant: instant(index), period: period, holding: instant(index)) }
        #expect(playout.change(notBefore: instant(1)) == nil, "nothing changed")
        // A seek at 1.015 s, within the second render.
        let at = second + 15_000_000
        schedule.withLock { _ = $0.schedule(PresentationTimeline(rate: 1, anchorItemTime: .init(nanoseconds: 10 * second), anchorHostTime: .init(nanoseconds: at)),
                                            discontinuous: true, now: .init(nanoseconds: second)) }
        #expect(playout.change(notBefore: instant(1)) == LocalInstant(nanoseconds: at))
        #expect(playout.change(notBefore: instant(1)) == nil, "told once")
        #expect(playout.resume(at: instant(1)))
        #expect(!playout.resume(at: instant(2)), "the render after the one resumed is forgotten")
        #expect(!playout.resume(at: instant(1) + TimeSpan(nanoseconds: 1)), "no render started there")
    }
}
