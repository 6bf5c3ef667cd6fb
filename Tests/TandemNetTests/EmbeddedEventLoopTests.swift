import Dispatch
import Synchronization
@testable import TandemNet
import TandemClock
import TandemTestKit
import Testing

/// The embedded loop: virtual time that moves only when the test advances it, tasks by deadline
/// then by scheduling order, cancellation, tasks scheduling tasks, ticks, and the confinement
/// it asserts. No test here waits for anything real.
@Suite struct EmbeddedEventLoopIOTests {
    static let hour: Int64 = 3_600_000_000_000

    @Test func nothingRunsAndNoTimePassesUntilTheTestDrivesTheLoop() {
        let loop = EmbeddedEventLoop(start: 5_000)
        let ran = Mutex<[String]>([])
        loop.execute { ran.withLock { $0.append("now") } }
        loop.schedule(at: 5_000 + Self.hour) { ran.withLock { $0.append("in an hour") } }
        #expect(ran.withLock { $0 }.isEmpty, "execute only queues")
        #expect(loop.currentTime == 5_000)
        loop.run()
        #expect(ran.withLock { $0 } == ["now"])
        #expect(loop.currentTime == 5_000, "run() does not move time")
        // An hour of virtual time passes at once: the clock is not the system's.
        let seenAt = Mutex<Int64>(0)
        loop.schedule(at: 5_000 + Self.hour - 1) { seenAt.withLock { $0 = loop.clock.instant().nanoseconds } }
        loop.advance(by: Self.hour)
        #expect(seenAt.withLock { $0 } == 5_000 + Self.hour - 1, "a task sees the clock at its own deadline")
        #expect(ran.withLock { $0 } == ["now", "in an hour"])
        #expect(loop.currentTime == 5_000 + Self.hour)
        #expect(loop.nextDeadline == nil)
    }

    @Test func tasksRunByDeadlineThenByTheOrderTheyWereScheduledIn() {
        let loop = EmbeddedEventLoop()
        let ran = Mutex<[String]>([])
        func note(_ name: String) -> @Sendable () -> Void { { ran.withLock { $0.append(name) } } }
        loop.schedule(at: 300, note("c"))
        loop.schedule(at: 100, note("a-1"))
        loop.schedule(at: 200, note("b"))
        loop.schedule(at: 100, note("a-2"))
        loop.execute(note("now"))
        loop.advance(to: 250)
        #expect(ran.withLock { $0 } == ["now", "a-1", "a-2", "b"])
        #expect(loop.currentTime == 250)
        loop.advance(to: 299)
        #expect(ran.withLock { $0 }.count == 4, "a task never runs before its deadline")
        loop.advance(to: 300)
        #expect(ran.withLock { $0 } == ["now", "a-1", "a-2", "b", "c"])
    }

    @Test func tasksScheduledByTasksKeepTheOrderAndRunWithinTheSameAdvance() {
        let loop = EmbeddedEventLoop()
        let ran = Mutex<[(String, Int64)]>([])
        let clock = loop.clock
        @Sendable func note(_ name: String) { ran.withLock { $0.append((name, clock.instant().nanoseconds)) } }
        loop.schedule(at: 100) {
            note("first")
            // For now: after what was already due now, still in this advance.
            loop.execute { note("executed by first") }
            // In the past: runs now, not at its deadline, and after what was queued before it.
            loop.schedule(at: 50) { note("past") }
            // Later but inside the window: runs at its own instant.
            loop.schedule(at: 400) {
                note("at 400")
                loop.schedule(at: 400) { note("at 400 again") }
            }
            // Beyond the window: waits.
            loop.schedule(at: 2_000) { note("beyond") }
        }
        loop.schedule(at: 100) { note("second") }
        loop.advance(to: 1_000)
        let names = ran.withLock { $0 }
        #expect(names.map(\.0) == ["first", "second", "executed by first", "past", "at 400", "at 400 again"])
        #expect(names.map(\.1) == [100, 100, 100, 100, 400, 400])
        loop.advance(to: 2_000)
        #expect(ran.withLock { $0 }.last?.0 == "beyond")
    }

    @Test func cancelledTasksNeverRunAndCancellingTwiceReportsNothingLeft() {
        let loop = EmbeddedEventLoop()
        let ran = Mutex<[String]>([])
        let later = loop.schedule(at: 200) { ran.withLock { $0.append("later") } }
        let cancelled = loop.schedule(at: 100) { ran.withLock { $0.append("cancelled") } }
        #expect(cancelled.cancel())
        #expect(!cancelled.cancel())
        // A task cancels another due at its own instant.
        let victim = Mutex<ScheduledTask?>(nil)
        loop.schedule(at: 150) { _ = victim.withLock { $0 }?.cancel() }
        victim.withLock { $0 = loop.schedule(at: 150) { ran.withLock { $0.append("victim") } } }
        #expect(loop.nextDeadline == 150, "a cancelled task does not count as the next deadline")
        loop.advance(to: 1_000)
        #expect(ran.withLock { $0 } == ["later"])
        #expect(!later.isPending)
        #expect(!later.cancel(), "a task that ran cannot be cancelled")
    }

    @Test func tickersRunEveryIntervalAfterTheTasksDueAtTheSameInstant() {
        let loop = EmbeddedEventLoop(start: 1_000, tickInterval: 20)
        let ran = Mutex<[String]>([])
        let id = Mutex<UInt64>(0)
        loop.execute {
            id.withLock { $0 = loop.addTicker { now in ran.withLock { $0.append("tick \(now.nanoseconds)") } } }
        }
        loop.schedule(at: 1_040) { ran.withLock { $0.append("task 1040") } }
        loop.advance(to: 1_065)
        #expect(ran.withLock { $0 } == ["tick 1020", "task 1040", "tick 1040", "tick 1060"])
        loop.execute { loop.removeTicker(id.withLock { $0 }) }
        loop.advance(to: 1_200)
        #expect(ran.withLock { $0 }.count == 4, "a removed ticker stops")
        #expect(loop.tickerCount == 0)
        #expect(loop.nextDeadline == nil)
    }

    // Tasks from other threads, and the order both loops agree on: `SerialEventLoopContractIOTests`.

    @Test func advancingUntilAConditionStopsAtTheFirstInstantItHolds() {
        let loop = EmbeddedEventLoop()
        let count = Mutex(0)
        for step in 1...10 { loop.schedule(at: Int64(step) * 1_000) { count.withLock { $0 += 1 } } }
        #expect(loop.advance(until: { count.withLock { $0 } == 3 }, within: 1_000_000))
        #expect(loop.currentTime == 3_000)
        #expect(!loop.advance(until: { count.withLock { $0 } == 100 }, within: 20_000))
        #expect(loop.currentTime == 23_000, "a condition that never holds ends at the limit")
        #expect(count.withLock { $0 } == 10)
    }

    #if DEBUG
    @Test func loopOnlyMethodsTrapOnAnotherThreadWhileTheLoopIsDriven() async {
        await #expect(processExitsWith: .failure) {
            let loop = EmbeddedEventLoop()
            loop.execute {
                // The driving thread waits here while another one adds a ticker: a trap.
                let done = DispatchSemaphore(value: 0)
                DispatchQueue.global().async {
                    loop.addTicker { _ in }
                    done.signal()
                }
                done.wait()
            }
            loop.run()
        }
    }

    @Test func aTaskCannotDriveItsOwnLoop() async {
        await #expect(processExitsWith: .failure) {
            let loop = EmbeddedEventLoop()
            loop.execute { loop.advance(by: 1) }
            loop.run()
        }
    }
    #endif
}
