import Testing
import TandemPlayback

/// The correction policy for players that cannot present on an exact schedule.
@Suite struct CorrectionPolicyTests {
    let ms: Int64 = 1_000_000

    @Test func smallErrorsAreLeftAloneAndLargeOnesSought() {
        var policy = CorrectionPolicy()
        #expect(policy.decide(playerTime: 10_000 * ms + 10 * ms, expectedTime: 10_000 * ms, rate: 1) == .none)
        #expect(policy.decide(playerTime: 10_000 * ms + 30 * ms, expectedTime: 10_000 * ms, rate: 1) == .none)
        #expect(policy.decide(playerTime: 10_000 * ms - 900 * ms, expectedTime: 10_000 * ms, rate: 1) == .seek(to: 10_000 * ms))
        // Paused: any visible error is fixed by a seek.
        #expect(policy.decide(playerTime: 5_050 * ms, expectedTime: 5_000 * ms, rate: 0) == .seek(to: 5_000 * ms))
    }

    @Test func mediumErrorsNudgeTheRateProportionallyWithinBounds() {
        var policy = CorrectionPolicy()
        // 50 ms ahead: slow down by 5 %, the bound.
        #expect(policy.decide(playerTime: 1_050 * ms, expectedTime: 1_000 * ms, rate: 1) == .nudge(rate: 0.95))
        policy = CorrectionPolicy()
        // 45 ms behind at double speed: speed up by 4.5 % of 2.
        guard case .nudge(let rate) = policy.decide(playerTime: 955 * ms, expectedTime: 1_000 * ms, rate: 2) else {
            Issue.record("no nudge")
            return
        }
        #expect(abs(rate - 2 * 1.045) < 1e-9)
    }

    @Test func hysteresisKeepsCorrectingUntilBackInsideTheDeadband() {
        var policy = CorrectionPolicy()
        #expect(policy.decide(playerTime: 1_060 * ms, expectedTime: 1_000 * ms, rate: 1) != .none)
        #expect(policy.correcting)
        // 25 ms: under the threshold that starts a correction, but one is under way.
        #expect(policy.decide(playerTime: 1_025 * ms, expectedTime: 1_000 * ms, rate: 1) != .none)
        // Back within 15 ms: done.
        #expect(policy.decide(playerTime: 1_010 * ms, expectedTime: 1_000 * ms, rate: 1) == .none)
        #expect(!policy.correcting)
        // And 25 ms again does not restart it.
        #expect(policy.decide(playerTime: 1_025 * ms, expectedTime: 1_000 * ms, rate: 1) == .none)
    }
}
