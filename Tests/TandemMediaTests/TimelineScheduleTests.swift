import Testing
@testable import TandemMedia
import TandemClock

/// The scheduler's pure core, on made-up instants: no threads, no clock.
@Suite struct TimelineScheduleTests {
    let second: Nanoseconds = 1_000_000_000

    @Test func framesAreDueWhenTheTimelineReachesThem() {
        let schedule = TimelineSchedule(PresentationTimeline(rate: 2, anchorMediaTime: 10 * second, anchorLocalTime: 100 * second))
        // 1 s of media later at rate 2 is half a second of local time later.
        #expect(schedule.due(start: 11 * second, end: 11 * second + 40_000_000, generation: 0).0 == .at(100 * second + second / 2))
        // The frame that covers the anchor is due at the anchor.
        #expect(schedule.due(start: 10 * second - 20_000_000, end: 10 * second + 20_000_000, generation: 0).0 == .at(100 * second))
        // A frame wholly before the anchor is stale.
        #expect(schedule.due(start: 9 * second, end: 9 * second + 40_000_000, generation: 0).0 == .stale)
        // Frames of another generation belong to no timeline.
        #expect(schedule.due(start: 11 * second, end: 12 * second, generation: 1).0 == .stale)
    }

    @Test func pausedTimelineShowsTheFrameAtItsPositionAsAStill() {
        let schedule = TimelineSchedule(.paused(at: 5 * second, from: 0))
        #expect(schedule.due(start: 5 * second - 10, end: 5 * second + 10, generation: 0).0 == .still)
        #expect(schedule.due(start: 6 * second, end: 7 * second, generation: 0).0 == .waiting)
        #expect(schedule.due(start: 4 * second, end: 5 * second, generation: 0).0 == .stale)
    }

    @Test func scheduledChangeTakesOverAtItsInstant() {
        var schedule = TimelineSchedule(PresentationTimeline(rate: 1, anchorMediaTime: 0, anchorLocalTime: 0))
        // At local 1 s: pause at media 1 s, announced at local 0.5 s.
        let pause = PresentationTimeline.paused(at: second, from: second)
        schedule.schedule(pause, discontinuous: false, now: second / 2)
        #expect(schedule.nextChange == second)
        // Before the pause, frames follow the playing timeline.
        #expect(schedule.due(start: second / 2, end: second / 2 + 40_000_000, generation: 0).0 == .at(second / 2))
        // A frame that would start after the pause waits.
        #expect(schedule.due(start: second + 40_000_000, end: second + 80_000_000, generation: 0).0 == .waiting)
        let early = schedule.advance(to: second - 1)
        #expect(!early)
        let onTime = schedule.advance(to: second)
        #expect(onTime)
        #expect(schedule.current.timeline == pause)
        #expect(schedule.nextChange == nil)
    }

    @Test func seekStartsANewGenerationThatOnlyItsTimelineTimes() {
        var schedule = TimelineSchedule(PresentationTimeline(rate: 1, anchorMediaTime: 0, anchorLocalTime: 0))
        let seek = PresentationTimeline(rate: 1, anchorMediaTime: 30 * second, anchorLocalTime: 2 * second)
        let generation = schedule.schedule(seek, discontinuous: true, now: second)
        #expect(generation == 1)
        // Old frames still play until the seek takes effect.
        #expect(schedule.due(start: second + second / 2, end: second + second / 2 + 1, generation: 0).0 == .at(second + second / 2))
        // New frames are due on the seek's timeline, the one covering the target at its instant.
        #expect(schedule.due(start: 30 * second - 1, end: 30 * second + 1, generation: 1).0 == .at(2 * second))
        #expect(schedule.due(start: 31 * second, end: 31 * second + 1, generation: 1).0 == .at(3 * second))
        schedule.advance(to: 2 * second)
        #expect(schedule.due(start: 2 * second, end: 2 * second + 1, generation: 0).0 == .stale)
    }

    @Test func changesScheduledInSequenceAllTakeEffect() {
        var schedule = TimelineSchedule(PresentationTimeline(rate: 1, anchorMediaTime: 0, anchorLocalTime: 0))
        // At 1 s: seek to 30 s. At 2 s: pause (at media 31 s). Both announced at 0.5 s.
        let seek = PresentationTimeline(rate: 1, anchorMediaTime: 30 * second, anchorLocalTime: second)
        schedule.schedule(seek, discontinuous: true, now: second / 2)
        let pause = PresentationTimeline.paused(at: 31 * second, from: 2 * second)
        schedule.schedule(pause, discontinuous: false, now: second / 2)
        #expect(schedule.pending.count == 2)
        #expect(schedule.newest == pause)
        // Frames after the seek play until the pause, then the one at the pause is the still.
        #expect(schedule.due(start: 30 * second + second / 2, end: 30 * second + second / 2 + 1, generation: 1).0 == .at(second + second / 2))
        #expect(schedule.due(start: 31 * second, end: 31 * second + 40_000_000, generation: 1).0 == .still)
        #expect(schedule.due(start: 31 * second + 40_000_000, end: 31 * second + 80_000_000, generation: 1).0 == .waiting)
        // A change for an earlier instant supersedes those scheduled after it.
        schedule.schedule(PresentationTimeline(rate: 2, anchorMediaTime: second / 2, anchorLocalTime: second / 2 + 1), discontinuous: false, now: second / 2)
        #expect(schedule.pending.count == 1)
        schedule.advance(to: 2 * second)
        #expect(schedule.current.timeline.rate == 2)
    }

    @Test func timelineMapsBothWays() {
        let timeline = PresentationTimeline(rate: 0.25, anchorMediaTime: 3 * second, anchorLocalTime: 50 * second)
        #expect(timeline.mediaTime(atLocalTime: 54 * second) == 4 * second)
        #expect(timeline.localTime(forMediaTime: 4 * second) == 54 * second)
        #expect(PresentationTimeline.paused(at: 0, from: 0).localTime(forMediaTime: 1) == nil)
        #expect(!PresentationTimeline(rate: 5, anchorMediaTime: 0, anchorLocalTime: 0).isValid)
        #expect(!PresentationTimeline(rate: 0.1, anchorMediaTime: 0, anchorLocalTime: 0).isValid)
        let faster = timeline.changingRate(to: 2, at: 54 * second)
        #expect(faster.anchorMediaTime == 4 * second)
        #expect(faster.mediaTime(atLocalTime: 55 * second) == 6 * second)
    }
}
