import Foundation
import Testing
@testable import TandemNet

/// Quiet acknowledgements keep each participant's own phase, so that many participants do not
/// all acknowledge on one tick.
@Suite struct AcknowledgementScheduleTests {
    let interval: Int64 = 250_000_000

    @Test func theFirstIsDueWithinOneIntervalOfJoining() {
        for _ in 0..<100 {
            let start = AcknowledgementSchedule.start(UUID(), at: 10_000_000_000, interval: interval)
            #expect(start <= 10_000_000_000 && start > 10_000_000_000 - interval)
        }
    }

    @Test func theScheduleKeepsItsPhaseWhateverTheTickThatSendsIt() {
        let last: Int64 = 1_000
        #expect(!AcknowledgementSchedule.isDue(last: last, at: last + interval - 1, interval: interval))
        #expect(AcknowledgementSchedule.isDue(last: last, at: last + interval, interval: interval))
        // Sent late (on a later tick, or after a quiet spell): the next is counted from the
        // phase, not from when this one went out.
        #expect(AcknowledgementSchedule.advance(from: last, to: last + interval + 19_000_000, interval: interval) == last + interval)
        #expect(AcknowledgementSchedule.advance(from: last, to: last + 7 * interval + 5, interval: interval) == last + 7 * interval)
    }

    @Test func participantsJoiningTogetherSpreadOverTheInterval() {
        // 1,000 participants admitted at the same instant, on 20 ms ticks: no tick carries
        // more than a few times its even share (1000 × 20 / 250 = 80).
        let now: Int64 = 5_000_000_000
        var perTick: [Int64: Int] = [:]
        for _ in 0..<1_000 {
            let start = AcknowledgementSchedule.start(UUID(), at: now, interval: interval)
            perTick[(start + interval - now) / 20_000_000, default: 0] += 1
        }
        #expect(perTick.count >= 12)
        #expect(perTick.values.max()! <= 200)
    }
}
