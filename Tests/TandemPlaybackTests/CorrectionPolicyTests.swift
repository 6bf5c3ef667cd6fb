import Testing
import TandemPlayback

/// The correction policy for players that cannot present on an exact schedule. The defaults are
/// for readings precise to well under a millisecond (mpv's audio clock); wider bands are
/// parameters.
@Suite struct CorrectionPolicyTests {
    let ms: Int64 = 1_000_000

    /// Whether `action` nudges the rate to `rate` (to within rounding).
    func nudges(_ action: CorrectionPolicy.Action, to rate: Double) -> Bool {
        if case .nudge(let nudged) = action { abs(nudged - rate) < 1e-9 } else { false }
    }

    @Test func smallErrorsAreLeftAloneAndLargeOnesSought() {
        var policy = CorrectionPolicy()
        #expect(policy.decide(playerTime: 10_000 * ms + ms / 2, expectedTime: 10_000 * ms, rate: 1) == .none)
        #expect(policy.decide(playerTime: 10_000 * ms - 3 * ms / 2, expectedTime: 10_000 * ms, rate: 1) == .none)
        #expect(policy.decide(playerTime: 10_000 * ms + ms, expectedTime: 10_000 * ms, rate: 1) == .none)
        #expect(!policy.correcting)
        #expect(policy.decide(playerTime: 10_000 * ms + 2 * ms, expectedTime: 10_000 * ms, rate: 1) != .none)
        #expect(policy.correcting)
        #expect(policy.decide(playerTime: 10_000 * ms - 260 * ms, expectedTime: 10_000 * ms, rate: 1) == .seek(to: 10_000 * ms))
        #expect(policy.decide(playerTime: 10_000 * ms + 900 * ms, expectedTime: 10_000 * ms, rate: 1) == .seek(to: 10_000 * ms))
        // Paused: any visible error is fixed by a seek.
        #expect(policy.decide(playerTime: 5_002 * ms, expectedTime: 5_000 * ms, rate: 0) == .seek(to: 5_000 * ms))
        #expect(policy.decide(playerTime: 5_000 * ms, expectedTime: 5_000 * ms, rate: 0) == .none)
    }

    /// An error (ms, positive: ahead), the group's rate, and the nudged rate expected.
    static let nudgeCases: [(Int64, Double, Double)] = [(4, 1, 0.996), (-6, 1, 1.006), (10, 2, 2 * 0.99), (-25, 1, 1.025),
                                                        (-50, 1, 1.05), (200, 1, 0.95), (-240, 1.5, 1.5 * 1.05)]

    @Test(arguments: nudgeCases)
    func errorsBeyondTheThresholdNudgeTheRateProportionallyWithinBounds(ahead: Int64, rate: Double, expected: Double) {
        // 1 % per 10 ms of error, at most 5 %: ahead slows down, behind speeds up.
        var policy = CorrectionPolicy()
        let action = policy.decide(playerTime: 1_000 * ms + ahead * ms, expectedTime: 1_000 * ms, rate: rate)
        #expect(nudges(action, to: expected), "\(ahead) ms at rate \(rate): \(action)")
        #expect(policy.correcting)
    }

    @Test func hysteresisKeepsCorrectingUntilBackInsideTheDeadband() {
        var policy = CorrectionPolicy()
        #expect(policy.decide(playerTime: 1_005 * ms, expectedTime: 1_000 * ms, rate: 1) != .none)
        #expect(policy.correcting)
        // 1 ms: not beyond the threshold that starts a correction, but one is under way.
        #expect(nudges(policy.decide(playerTime: 1_001 * ms, expectedTime: 1_000 * ms, rate: 1), to: 0.999))
        // Overshot to 1.5 ms behind: still outside the deadband, so it turns round.
        #expect(nudges(policy.decide(playerTime: 1_000 * ms - 3 * ms / 2, expectedTime: 1_000 * ms, rate: 1), to: 1.0015))
        // Back within 0.5 ms: done.
        #expect(policy.decide(playerTime: 1_000 * ms + ms / 2, expectedTime: 1_000 * ms, rate: 1) == .none)
        #expect(!policy.correcting)
        // And 1 ms again does not restart it.
        #expect(policy.decide(playerTime: 1_001 * ms, expectedTime: 1_000 * ms, rate: 1) == .none)
    }

    @Test func resetForgetsACorrectionUnderWay() {
        var policy = CorrectionPolicy()
        _ = policy.decide(playerTime: 1_010 * ms, expectedTime: 1_000 * ms, rate: 1)
        #expect(policy.correcting)
        policy.reset()
        #expect(!policy.correcting)
        #expect(policy.decide(playerTime: 1_001 * ms, expectedTime: 1_000 * ms, rate: 1) == .none)
        #expect(policy == CorrectionPolicy())
        // After a start, the error left is the start's own: anything beyond the deadband is corrected.
        policy.reset(correcting: true)
        #expect(nudges(policy.decide(playerTime: 1_001 * ms, expectedTime: 1_000 * ms, rate: 1), to: 0.999))
        policy.reset(correcting: true)
        #expect(policy.decide(playerTime: 1_000 * ms + ms / 4, expectedTime: 1_000 * ms, rate: 1) == .none)
        #expect(!policy.correcting)
    }

    @Test func widerBandsForCoarseReadingsAreParameters() {
        // A player read only to half a frame: leave 15 ms, correct from 40 ms, seek beyond 400 ms.
        var policy = CorrectionPolicy(deadband: 15 * ms, correctionThreshold: 40 * ms, seekThreshold: 400 * ms,
                                      gain: 0.01 / 10_000_000)
        #expect(policy.decide(playerTime: 1_030 * ms, expectedTime: 1_000 * ms, rate: 1) == .none)
        #expect(nudges(policy.decide(playerTime: 1_300 * ms, expectedTime: 1_000 * ms, rate: 1), to: 0.95))
        #expect(nudges(policy.decide(playerTime: 1_020 * ms, expectedTime: 1_000 * ms, rate: 1), to: 0.98))
        #expect(policy.decide(playerTime: 1_010 * ms, expectedTime: 1_000 * ms, rate: 1) == .none)
        #expect(policy.decide(playerTime: 1_500 * ms, expectedTime: 1_000 * ms, rate: 1) == .seek(to: 1_000 * ms))
    }

    @Test func inconsistentBoundsAreRaisedToTheSmallerOnes() {
        let policy = CorrectionPolicy(deadband: 5 * ms, correctionThreshold: 2 * ms, seekThreshold: ms)
        #expect(policy.correctionThreshold == 5 * ms)
        #expect(policy.seekThreshold == 5 * ms)
    }
}
