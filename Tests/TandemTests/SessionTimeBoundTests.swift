import Foundation
import Testing
@testable import Tandem
import TandemClock

/// The bound on how far the relay's session time may run ahead of a participant's own clock:
/// honest records with delivery jitter and clock drift pass, a forward jump is caught once, a
/// backward step is not (it looks like a slow delivery). Virtual instants only.
@Suite struct SessionTimeBoundTests {
    /// Records one a second for `seconds`, the session clock `offset` ahead of the local one and
    /// drifting `ppm`, each delivered after `delay(index)`; answers the jumps found, by index.
    static func run(seconds: Int, ppm: Int64 = 0, offset: TimeSpan = .seconds(1_000), start: Int = 0, bound: inout SessionTimeBound,
                    sessionShift: (Int) -> TimeSpan = { _ in .zero }, delay: (Int) -> TimeSpan) -> [Int: TimeSpan] {
        var found: [Int: TimeSpan] = [:]
        for index in start..<(start + seconds) {
            let local = LocalInstant(nanoseconds: Int64(index) * 1_000_000_000)
            let drift = TimeSpan(nanoseconds: Int64(index) * 1_000 * ppm)
            let ordered = SessionInstant(nanoseconds: local.nanoseconds + offset.nanoseconds + drift.nanoseconds + sessionShift(index).nanoseconds)
            if let ahead = bound.take(ordered: ordered, received: local + delay(index)) { found[index] = ahead }
        }
        return found
    }

    @Test func honestRecordsWithJitterAndDriftPass() {
        var bound = SessionTimeBound()
        // An hour, delays from 1 to 200 ms, the relay's clock 500 ppm fast.
        let found = Self.run(seconds: 3_600, ppm: 500, bound: &bound) { index in .milliseconds(Int64(1 + (index * 37) % 200)) }
        #expect(found.isEmpty)
    }

    @Test func aForwardJumpIsCaughtOnceAndABackwardStepIsNot() throws {
        var bound = SessionTimeBound()
        let found = Self.run(seconds: 120, bound: &bound, sessionShift: { $0 >= 60 ? .seconds(2) : .zero }) { _ in .milliseconds(20) }
        #expect(found.keys.sorted() == [60])
        let ahead = try #require(found[60])
        #expect(ahead > .milliseconds(1_900) && ahead <= .seconds(2))

        var stepped = SessionTimeBound()
        #expect(Self.run(seconds: 120, bound: &stepped, sessionShift: { $0 >= 60 ? .seconds(-5) : .zero }) { _ in .milliseconds(20) }.isEmpty)
        // A delivery slower than any before, then one as fast as ever: no jump.
        var slow = SessionTimeBound()
        #expect(Self.run(seconds: 30, bound: &slow) { $0 == 10 ? .seconds(20) : .milliseconds(20) }.isEmpty)
    }

    /// The limit of the check: a session clock that runs fast a little at a time looks like
    /// deliveries that get faster, and the floor follows it down. Only a jump is caught.
    @Test func aSessionClockRunningFastAStepAtATimeIsNotCaught() {
        var bound = SessionTimeBound()
        #expect(Self.run(seconds: 600, ppm: 10_000, bound: &bound) { _ in .milliseconds(5) }.isEmpty)
    }
}
