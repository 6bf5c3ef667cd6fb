import Synchronization
import TandemClock
@testable import TandemNet
import TandemTestKit
import Testing

/// The loop's scheduling in typed time, on the embedded loop's virtual clock: spans from now
/// clamp and saturate, and the bare-nanosecond forms name the same instants.
@Suite struct LoopTimeTests {
    @Test func aNegativeDelayRunsNowNeverInThePast() {
        let loop = EmbeddedEventLoop(start: LocalInstant(nanoseconds: 5_000), tickInterval: .milliseconds(20))
        let task = loop.schedule(after: TimeSpan(nanoseconds: -3_000)) {}
        #expect(task.due == LocalInstant(nanoseconds: 5_000))
        loop.run()
        #expect(!task.isPending)
    }

    @Test(arguments: [Int64.max, Int64.max - 1, Int64.max / 2 + 1])
    func aDelayPastTheEndOfTimeSaturates(nanoseconds: Int64) {
        let loop = EmbeddedEventLoop(start: LocalInstant(nanoseconds: Int64.max / 2), tickInterval: .milliseconds(20))
        let task = loop.schedule(after: TimeSpan(nanoseconds: nanoseconds)) {}
        #expect(task.due == .distantFuture)
        loop.advance(by: 3_600_000_000_000)
        #expect(task.isPending, "the end of time is never due")
        #expect(loop.nextDue == .distantFuture)
    }

    @Test func theBareFormsNameTheSameInstants() {
        let loop = EmbeddedEventLoop(start: 1_000)
        let ran = Mutex<[String]>([])
        let typed = loop.schedule(at: LocalInstant(nanoseconds: 2_000)) { ran.withLock { $0.append("typed") } }
        let bare = loop.schedule(at: Int64(2_000)) { ran.withLock { $0.append("bare") } }
        let after = loop.schedule(after: Int64(1_000)) { ran.withLock { $0.append("after") } }
        #expect(typed.due == bare.due)
        #expect(after.due == typed.due)
        #expect(bare.deadline == 2_000)
        #expect(loop.nextDeadline == loop.nextDue?.nanoseconds)
        loop.advance(by: 999)
        #expect(ran.withLock { $0 }.isEmpty)
        loop.advance(by: 1)
        #expect(ran.withLock { $0 } == ["typed", "bare", "after"])
    }

    @Test func tickersHearTheInstantEveryInterval() {
        let loop = EmbeddedEventLoop(start: LocalInstant(nanoseconds: 100), tickInterval: .microseconds(5))
        let heard = Mutex<[LocalInstant]>([])
        loop.addTicker { now in heard.withLock { $0.append(now) } }
        #expect(loop.tickInterval == TimeSpan(nanoseconds: 5_000))
        loop.advance(by: 15_000)
        #expect(heard.withLock { $0 } == [5_100, 10_100, 15_100].map { LocalInstant(nanoseconds: $0) })
    }
}
