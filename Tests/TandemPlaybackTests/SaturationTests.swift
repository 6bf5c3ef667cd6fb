import Foundation
import TandemClock
import Testing
@testable import TandemMedia
import TandemPlayback

/// The timeline's arithmetic at the extremes: it saturates at the bounds of Int64 and never
/// traps, whatever the anchors and the rate, in the shared timeline, the player's timeline and
/// schedule, the correction policy and the conversions from seconds.
@Suite struct SaturationTests {
    static let conversions: [(Double, Int64)] = [
        (9.3e18, Int64.max), (-9.3e18, Int64.min), (9e18, 9_000_000_000_000_000_000), (Double.infinity, Int64.max), (-Double.infinity, Int64.min),
        (Double.nan, 0), (9_223_372_036_854_775_807.0, Int64.max), (-9_223_372_036_854_775_808.0, Int64.min),
        (1.5, 2), (-1.5, -2), (0, 0), (1e18, 1_000_000_000_000_000_000),
    ]

    @Test(arguments: conversions)
    func doublesBecomeTheNearestNanosecondsWithinInt64(_ value: Double, _ expected: Int64) {
        #expect(Int64(saturating: value) == expected)
    }

    @Test func sumsAndDifferencesStopAtTheBounds() {
        #expect(Int64.max.saturatingAdding(1) == .max)
        #expect(Int64.min.saturatingAdding(-1) == .min)
        #expect(Int64.min.saturatingSubtracting(1) == .min)
        #expect(Int64.max.saturatingSubtracting(-1) == .max)
        #expect(Int64(0).saturatingSubtracting(.min) == .max)
        #expect(Int64(5).saturatingAdding(-7) == -2)
        #expect(Int64.min.saturatingDistance(to: 0) == .max)
        #expect(Int64.max.saturatingDistance(to: .min) == .max)
        #expect(Int64(-3).saturatingDistance(to: 4) == 7)
        #expect(Int64.max.saturatingScaled(by: 4) == .max)
        #expect(Int64.min.saturatingScaled(by: 4) == .min)
        #expect(Int64(10).saturatingScaled(by: .nan) == 0)
        #expect(Int64(1).saturatingDivided(by: 0) == .max)
    }

    static let extremeTimelines: [SharedTimeline] = [
        SharedTimeline(item: "film", rate: 4, anchorMediaTime: ItemTime(nanoseconds: .max - 1), anchorSessionTime: .min, version: 1),
        SharedTimeline(item: "film", rate: 4, anchorMediaTime: .min, anchorSessionTime: .max, version: 1),
        SharedTimeline(item: "film", rate: 1e15, anchorMediaTime: 0, anchorSessionTime: 0, version: 1),
        SharedTimeline(item: "film", rate: .infinity, anchorMediaTime: 0, anchorSessionTime: 0, version: 1),
        SharedTimeline(item: "film", rate: .nan, anchorMediaTime: 7, anchorSessionTime: 0, version: 1),
        SharedTimeline(item: "film", rate: .leastNonzeroMagnitude, anchorMediaTime: 0, anchorSessionTime: .min, version: 1),
    ]

    @Test(arguments: extremeTimelines)
    func theSharedTimelineAnswersAtEveryInstant(_ timeline: SharedTimeline) {
        for instant: Int64 in [.min, -1, 0, 1, 1_000_000_000, .max] {
            _ = timeline.mediaTime(atSessionTime: SessionInstant(nanoseconds: instant))
            _ = timeline.sessionTime(forMediaTime: ItemTime(nanoseconds: instant))
        }
    }

    @Test func theSharedTimelineSaturatesInTheRightDirection() {
        let running = SharedTimeline(item: "film", rate: 4, anchorMediaTime: ItemTime(nanoseconds: .max - 1), anchorSessionTime: .min, version: 1)
        #expect(running.mediaTime(atSessionTime: .max) == .max)
        #expect(running.mediaTime(atSessionTime: .min) == ItemTime(nanoseconds: .max - 1))
        let backwards = SharedTimeline(item: "film", rate: 4, anchorMediaTime: .min, anchorSessionTime: .max, version: 1)
        #expect(backwards.mediaTime(atSessionTime: .min) == .min)
        #expect(backwards.sessionTime(forMediaTime: .max) == .max)
        let huge = SharedTimeline(item: "film", rate: 1e15, anchorMediaTime: 0, anchorSessionTime: 0, version: 1)
        #expect(huge.mediaTime(atSessionTime: 10_000_000_000) == .max)
        #expect(huge.mediaTime(atSessionTime: -10_000_000_000) == .min)
        // Ordinary values are exactly what they were.
        let ordinary = SharedTimeline(item: "film", rate: 1.5, anchorMediaTime: 2_000_000_000, anchorSessionTime: 10_000_000_000, version: 1)
        #expect(ordinary.mediaTime(atSessionTime: 12_000_000_000) == 5_000_000_000)
        #expect(ordinary.sessionTime(forMediaTime: 5_000_000_000) == 12_000_000_000)
    }

    @Test func thePlayersTimelineAndScheduleAnswerAtEveryInstant() {
        let timelines = [
            PresentationTimeline(rate: 4, anchorItemTime: .distantFuture, anchorHostTime: .distantPast),
            PresentationTimeline(rate: 4, anchorItemTime: .distantPast, anchorHostTime: .distantFuture),
            PresentationTimeline(rate: .infinity, anchorItemTime: .zero, anchorHostTime: .zero),
            PresentationTimeline(rate: 0.25, anchorItemTime: .distantFuture, anchorHostTime: .distantFuture),
        ]
        for timeline in timelines {
            for instant: Int64 in [.min, 0, .max] {
                _ = timeline.itemTime(atHostTime: HostInstant(nanoseconds: instant))
                _ = timeline.hostTime(forItemTime: ItemTime(nanoseconds: instant))
                _ = timeline.changingRate(to: 1, at: HostInstant(nanoseconds: instant))
                _ = TimelineSchedule.due(start: ItemTime(nanoseconds: instant), end: .distantFuture, on: timeline)
            }
            var schedule = TimelineSchedule(.paused(at: .zero, from: .zero))
            schedule.schedule(timeline, discontinuous: true, now: .zero)
            _ = schedule.due(start: .distantPast, end: .distantFuture, generation: schedule.newestGeneration)
            schedule.advance(to: .distantFuture)
            _ = schedule.due(start: .distantFuture - TimeSpan(nanoseconds: 1), end: .distantFuture, generation: schedule.newestGeneration)
        }
        let fast = PresentationTimeline(rate: 4, anchorItemTime: .distantFuture - TimeSpan(nanoseconds: 10), anchorHostTime: .zero)
        #expect(fast.itemTime(atHostTime: HostInstant(nanoseconds: 1_000)) == .distantFuture)
    }

    @Test func theBareNanosecondFormsOfThePlayersTimelineAgreeWithTheTypedOnes() {
        let timeline = PresentationTimeline(rate: 1.5, anchorItemTime: ItemTime(nanoseconds: 2_000), anchorHostTime: HostInstant(nanoseconds: 7_000))
        let bare = PresentationTimeline(rate: 1.5, anchorMediaTime: 2_000, anchorLocalTime: 7_000)
        #expect(bare == timeline)
        #expect(bare.anchorMediaTime == 2_000 && bare.anchorLocalTime == 7_000)
        #expect(bare.mediaTime(atLocalTime: 9_001) == timeline.itemTime(atHostTime: HostInstant(nanoseconds: 9_001)).nanoseconds)
        #expect(bare.localTime(forMediaTime: 5_001) == timeline.hostTime(forItemTime: ItemTime(nanoseconds: 5_001))?.nanoseconds)
        let at: Int64 = 8_000
        let changed = bare.changingRate(to: 2, at: at)
        #expect(changed == timeline.changingRate(to: 2, at: HostInstant(nanoseconds: 8_000)))
        let (position, from): (Int64, Int64) = (3, 4)
        let paused = PresentationTimeline.paused(at: position, from: from)
        #expect(paused == .paused(at: ItemTime(nanoseconds: 3), from: HostInstant(nanoseconds: 4)))
        #expect(PresentationTimeline.GroupAnchor(mediaTime: 5, rate: 2) == .init(itemTime: ItemTime(nanoseconds: 5), rate: 2))
    }

    @Test func secondsPeopleTypeSaturate() {
        #expect(MediaTime.nanoseconds(seconds: 1e300) == .max)
        #expect(MediaTime.nanoseconds(seconds: -1e300) == .min)
        #expect(MediaTime.nanoseconds(seconds: .nan) == 0)
        #expect(MediaTime.nanoseconds(seconds: 1.5) == 1_500_000_000)
    }

    @Test func theCorrectionPolicyDecidesAtTheExtremes() {
        var policy = CorrectionPolicy()
        #expect(policy.decide(playerTime: .max, expectedTime: .min, rate: 1) == .seek(to: .min))
        #expect(policy.decide(playerTime: .min, expectedTime: .max, rate: 1) == .seek(to: .max))
        #expect(policy.decide(playerTime: .min, expectedTime: 0, rate: 0) == .seek(to: 0))
    }
}
