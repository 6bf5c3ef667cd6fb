import Dispatch
import Synchronization
@testable import TandemNet
import TandemClock
import TandemTestKit
import Testing
import TandemHarness

/// What a shell relies on of any `SerialEventLoop`, one test body over both loops in the manner
/// of Hummingbird's `.router | .live`: the embedded loop in virtual time, and the epoll loop on
/// its own thread with a virtual clock. Tasks from other threads run on the loop in each
/// thread's order; scheduled tasks run by deadline, ties in scheduling order, unless cancelled.
@Suite struct SerialEventLoopContractIOTests {
    /// Which loop a case runs on.
    enum Kind: String, CaseIterable, CustomTestStringConvertible {
        case embedded, live
        var testDescription: String { rawValue }
    }

    /// A loop under test and how the test drives it: the embedded one runs what is due when told;
    /// the live one runs by itself, and the test waits for it (bounded) at a barrier.
    struct LoopUnderTest {
        let loop: any SerialEventLoop
        /// Runs (or waits for) everything due now.
        let drain: () -> Void
        /// Moves the clock to `instant` and runs (or waits for) everything due by then.
        let advance: (Int64) -> Void
        let shutdown: () -> Void

        static func make(_ kind: Kind) throws -> LoopUnderTest {
            switch kind {
            case .embedded:
                let loop = EmbeddedEventLoop()
                return LoopUnderTest(loop: loop, drain: { loop.run() }, advance: { loop.advance(to: $0) }, shutdown: {})
            case .live:
                let clock = VirtualClock()
                let loop = try EventLoop(name: "test-contract", clock: clock, tickInterval: .seconds(1_000))
                loop.start()
                // Two barriers: the pass that runs the first may precede the one that runs the due tasks.
                let drain = {
                    for _ in 0..<2 {
                        let done = DispatchSemaphore(value: 0)
                        loop.execute { done.signal() }
                        #expect(done.wait(timeout: .now() + 10) == .success, "the loop did not run a task")
                    }
                }
                return LoopUnderTest(loop: loop, drain: drain, advance: { instant in
                    clock.set(to: instant)
                    drain()
                }, shutdown: {
                    loop.stop()
                    loop.reset()
                })
            }
        }
    }

    @Test(arguments: Kind.allCases)
    func tasksFromOtherThreadsRunOnTheLoopInEachThreadsOrder(_ kind: Kind) throws {
        let under = try LoopUnderTest.make(kind)
        defer { under.shutdown() }
        let loop = under.loop
        let threads = 4
        let perThread = 500
        let received = Mutex<[[Int]]>(Array(repeating: [], count: threads))
        let offLoop = Atomic<Int>(0)
        let group = DispatchGroup()
        for thread in 0..<threads {
            DispatchQueue.global().async(group: group) {
                for index in 0..<perThread {
                    loop.execute {
                        if !loop.inLoop { offLoop.add(1, ordering: .relaxed) }
                        received.withLock { $0[thread].append(index) }
                    }
                }
            }
        }
        #expect(group.wait(timeout: .now() + 10) == .success)
        under.drain()
        #expect(offLoop.load(ordering: .relaxed) == 0)
        #expect(!loop.inLoop, "the test's thread is not the loop's")
        for sequence in received.withLock({ $0 }) { #expect(sequence == Array(0..<perThread)) }
    }

    @Test(arguments: Kind.allCases)
    func scheduledTasksRunByDeadlineThenInOrderUnlessCancelled(_ kind: Kind) throws {
        let under = try LoopUnderTest.make(kind)
        defer { under.shutdown() }
        let loop = under.loop
        let order = Mutex<[Int]>([])
        let origin = loop.now
        loop.schedule(at: origin + TimeSpan(nanoseconds: 500)) { order.withLock { $0.append(3) } }
        loop.schedule(at: origin + TimeSpan(nanoseconds: 100)) { order.withLock { $0.append(1) } }
        loop.schedule(at: origin + TimeSpan(nanoseconds: 100)) { order.withLock { $0.append(2) } }
        loop.schedule(at: origin + TimeSpan(nanoseconds: 600)) { order.withLock { $0.append(99) } }.cancel()
        loop.schedule(after: TimeSpan(nanoseconds: 700)) { order.withLock { $0.append(4) } }
        under.advance(origin.nanoseconds + 499)
        #expect(order.withLock { $0 } == [1, 2])
        under.advance(origin.nanoseconds + 10_000)
        #expect(order.withLock { $0 } == [1, 2, 3, 4])
    }

    /// What `runAndWait` answers, and where the body ran.
    struct Answer: Error, Equatable { let onLoop: Bool }

    @Test(arguments: Kind.allCases)
    func runAndWaitAnswersOnTheLoopWhoeverAsks(_ kind: Kind) throws {
        let under = try LoopUnderTest.make(kind)
        defer { under.shutdown() }
        let loop = under.loop
        // From the test's thread: the live loop's own thread runs it while the caller waits; the
        // embedded loop, which nothing drives between advances, runs it on the caller's.
        let fromOutside = try loop.runAndWait { loop.inLoop }
        #expect(fromOutside == (kind == .live))
        #expect(loop.drivenElsewhere == false || kind == .live)
        // What the body throws reaches the caller.
        #expect(throws: Answer(onLoop: kind == .live)) { try loop.runAndWait { () throws -> Int in throw Answer(onLoop: loop.inLoop) } }
        // From a task on the loop: at once, in the same call, with no wait on itself.
        let fromLoop = Mutex<[Bool]>([])
        loop.execute {
            let answer = try? loop.runAndWait { loop.inLoop }
            fromLoop.withLock { $0.append(answer ?? false) }
        }
        under.drain()
        #expect(fromLoop.withLock { $0 } == [true])
    }
}
