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
        let schedule = TimelineSchedule(.paused(at: 0, from: 0))
        playout.attach { (schedule, 0) }
        var frames = 0
        for write in 0..<300_000 {
            let instant = LocalInstant(nanoseconds: Int64(write) * 20_833)
            frames += playout.render(frames: 1, instant: instant, period: 20_833, holding: instant).count / AudioChunk.channelCount
        }
        #expect(frames == 300_000)
    }
}
