import Testing
@testable import TandemMedia
import TandemClock

/// The scheduler's pure core, on made-up instants: no threads, no clock.
@Suite struct TimelineScheduleTests {
    let second: Int64 = 1_000_000_000

    @Test func framesAreDueWhenTheTimelineReachesThem() {
        let schedule = TimelineSchedule(PresentationTimeline(rate: 2, anchorItemTime: .init(nanoseconds: 10 * second), anchorHostTime: .init(nanoseconds: 100 * second)))
        // 1 s of media later at rate 2 is half a second of local time later.
        #expect(schedule.due(start: .init(nanoseconds: 11 * second), end: .init(nanoseconds: 11 * second + 40_000_000), generation: 0).0 == .at(.init(nanoseconds: 100 * second + second / 2)))
        // The frame that covers the anchor is due at the anchor.
        #expect(schedule.due(start: .init(nanoseconds: 10 * second - 20_000_000), end: .init(nanoseconds: 10 * second + 20_000_000), generation: 0).0 == .at(.init(nanoseconds: 100 * second)))
        // A frame wholly before the anchor is stale.
        #expect(schedule.due(start: .init(nanoseconds: 9 * second), end: .init(nanoseconds: 9 * second + 40_000_000), generation: 0).0 == .stale)
        // Frames of another generation belong to no timeline.
        #expect(schedule.due(start: .init(nanoseconds: 11 * second), end: .init(nanoseconds: 12 * second), generation: 1).0 == .stale)
    }

    @Test func pausedTimelineShowsTheFrameAtItsPositionAsAStill() {
        let schedule = TimelineSchedule(.paused(at: .init(nanoseconds: 5 * second), from: .zero))
        #expect(schedule.due(start: .init(nanoseconds: 5 * second - 10), end: .init(nanoseconds: 5 * second + 10), generation: 0).0 == .still)
        #expect(schedule.due(start: .init(nanoseconds: 6 * second), end: .init(nanoseconds: 7 * second), generation: 0).0 == .waiting)
        #expect(schedule.due(start: .init(nanoseconds: 4 * second), end: .init(nanoseconds: 5 * second), generation: 0).0 == .stale)
    }

    @Test func scheduledChangeTakesOverAtItsInstant() {
        var schedule = TimelineSchedule(PresentationTimeline(rate: 1, anchorItemTime: .zero, anchorHostTime: .zero))
        // At local 1 s: pause at media 1 s, announced at local 0.5 s.
        let pause = PresentationTimeline.paused(at: .init(nanoseconds: second), from: .init(nanoseconds: second))
        schedule.schedule(pause, discontinuous: false, now: .init(nanoseconds: second / 2))
        #expect(schedule.nextChange == .init(nanoseconds: second))
        // Before the pause, frames follow the playing timeline.
        #expect(schedule.due(start: .init(nanoseconds: second / 2), end: .init(nanoseconds: second / 2 + 40_000_000), generation: 0).0 == .at(.init(nanoseconds: second / 2)))
        // A frame that would start after the pause waits.
        #expect(schedule.due(start: .init(nanoseconds: second + 40_000_000), end: .init(nanoseconds: second + 80_000_000), generation: 0).0 == .waiting)
        let early = schedule.advance(to: .init(nanoseconds: second - 1))
        #expect(!early)
        let onTime = schedule.advance(to: .init(nanoseconds: second))
        #expect(onTime)
        #expect(schedule.current.timeline == pause)
        #expect(schedule.nextChange == nil)
    }

    @Test func seekStartsANewGenerationThatOnlyItsTimelineTimes() {
        var schedule = TimelineSchedule(PresentationTimeline(rate: 1, anchorItemTime: .zero, anchorHostTime: .zero))
        let seek = PresentationTimeline(rate: 1, anchorItemTime: .init(nanoseconds: 30 * second), anchorHostTime: .init(nanoseconds: 2 * second))
        let generation = schedule.schedule(seek, discontinuous: true, now: .init(nanoseconds: second))
        #expect(generation == 1)
        // Old frames still play until the seek takes effect.
        #expect(schedule.due(start: .init(nanoseconds: second + second / 2), end: .init(nanoseconds: second + second / 2 + 1), generation: 0).0 == .at(.init(nanoseconds: second + second / 2)))
        // New frames are due on the seek's timeline, the one covering the target at its instant.
        #expect(schedule.due(start: .init(nanoseconds: 30 * second - 1), end: .init(nanoseconds: 30 * second + 1), generation: 1).0 == .at(.init(nanoseconds: 2 * second)))
        #expect(schedule.due(start: .init(nanoseconds: 31 * second), end: .init(nanoseconds: 31 * second + 1), generation: 1).0 == .at(.init(nanoseconds: 3 * second)))
        schedule.advance(to: .init(nanoseconds: 2 * second))
        #expect(schedule.due(start: .init(nanoseconds: 2 * second), end: .init(nanoseconds: 2 * second + 1), generation: 0).0 == .stale)
    }

    @Test func changesScheduledInSequenceAllTakeEffect() {
        var schedule = TimelineSchedule(PresentationTimeline(rate: 1, anchorItemTime: .zero, anchorHostTime: .zero))
        // At 1 s: seek to 30 s. At 2 s: pause (at media 31 s). Both announced at 0.5 s.
        let seek = PresentationTimeline(rate: 1, anchorItemTime: .init(nanoseconds: 30 * second), anchorHostTime: .init(nanoseconds: second))
        schedule.schedule(seek, discontinuous: true, now: .init(nanoseconds: second / 2))
        let pause = PresentationTimeline.paused(at: .init(nanoseconds: 31 * second), from: .init(nanoseconds: 2 * second))
        schedule.schedule(pause, discontinuous: false, now: .init(nanoseconds: second / 2))
        #expect(schedule.pending.count == 2)
        #expect(schedule.newest == pause)
        // Frames after the seek play until the pause, then the one at the pause is the still.
        #expect(schedule.due(start: .init(nanoseconds: 30 * second + second / 2), end: .init(nanoseconds: 30 * second + second / 2 + 1), generation: 1).0 == .at(.init(nanoseconds: second + second / 2)))
        #expect(schedule.due(start: .init(nanoseconds: 31 * second), end: .init(nanoseconds: 31 * second + 40_000_000), generation: 1).0 == .still)
        #expect(schedule.due(start: .init(nanoseconds: 31 * second + 40_000_000), end: .init(nanoseconds: 31 * second + 80_000_000), generation: 1).0 == .waiting)
        // A change for an earlier instant supersedes those scheduled after it.
        schedule.schedule(PresentationTimeline(rate: 2, anchorItemTime: .init(nanoseconds: second / 2), anchorHostTime: .init(nanoseconds: second / 2 + 1)), discontinuous: false, now: .init(nanoseconds: second / 2))
        #expect(schedule.pending.count == 1)
        schedule.advance(to: .init(nanoseconds: 2 * second))
        #expect(schedule.current.timeline.rate == 2)
    }

    @Test func timelineMapsBothWays() {
        let timeline = PresentationTimeline(rate: 0.25, anchorItemTime: .init(nanoseconds: 3 * second), anchorHostTime: .init(nanoseconds: 50 * second))
        #expect(timeline.itemTime(atHostTime: .init(nanoseconds: 54 * second)) == .init(nanoseconds: 4 * second))
        #expect(timeline.hostTime(forItemTime: .init(nanoseconds: 4 * second)) == .init(nanoseconds: 54 * second))
        #expect(PresentationTimeline.paused(at: .zero, from: .zero).hostTime(forItemTime: .init(nanoseconds: 1)) == nil)
        #expect(!PresentationTimeline(rate: 5, anchorItemTime: .zero, anchorHostTime: .zero).isValid)
        #expect(!PresentationTimeline(rate: 0.1, anchorItemTime: .zero, anchorHostTime: .zero).isValid)
        let faster = timeline.changingRate(to: 2, at: .init(nanoseconds: 54 * second))
        #expect(faster.anchorItemTime == .init(nanoseconds: 4 * second))
        #expect(faster.itemTime(atHostTime: .init(nanoseconds: 55 * second)) == .init(nanoseconds: 6 * second))
    }
}
