import Foundation
import Testing
@testable import TandemMedia
import TandemClock

/// A millisecond, in the core's nanoseconds.
private let ms: Int64 = 1_000_000

/// The core in a reference, so that `#expect` can call its mutating methods.
private final class Core {
    var value: WakeGuardCore
    init(_ configuration: WakeGuardCore.Configuration = WakeGuardCore.Configuration()) {
        value = WakeGuardCore(configuration: configuration)
    }
    var windows: [Range<Int64>] { value.windows }
    func isEngaged(at now: Int64) -> Bool { value.isEngaged(at: now) }
    func woke(deadline: Int64, at now: Int64) -> Bool { value.woke(deadline: deadline, at: now) }
    func cover(deadline: Int64, at now: Int64) -> Bool { value.cover(deadline: deadline, at: now) }
    func next(at now: Int64) -> WakeGuardCore.Step { value.next(at: now) }
}

/// The wake guard's decisions (`WakeGuardCore`), on numbers for instants: when it engages and
/// lets go, which windows its warmers spin through, and its bound.
@Suite struct WakeGuardCoreTests {
    /// A core engaged by a wake 0.5 ms late at 1 ms.
    private static func engaged(_ configuration: WakeGuardCore.Configuration = WakeGuardCore.Configuration()) -> Core {
        let core = Core(configuration)
        #expect(core.woke(deadline: 1 * ms, at: 1 * ms + 500_000))
        return core
    }

    @Test func aMachineThatWakesOnTimeIsNeverGuarded() {
        let core = Core()
        // 0.3 ms late at most: prompt enough.
        for deadline in stride(from: 10 * ms, to: 1_000 * ms, by: Int(33 * ms)) {
            #expect(!core.woke(deadline: deadline, at: deadline + 300_000))
            #expect(!core.cover(deadline: deadline + 33 * ms, at: deadline + 1 * ms))
        }
        #expect(core.next(at: 1_000 * ms) == .idle)
        #expect(core.windows.isEmpty)
        // A wait that returned early (woken) says nothing either.
        #expect(!core.woke(deadline: 2_000 * ms, at: 1_000 * ms))
        #expect(!core.isEngaged(at: 2_000 * ms))
    }

    @Test func onceAWaitWokeLateTheLastTwoMillisecondsBeforeEachDeadlineAreSpunThrough() {
        let core = Self.engaged()
        #expect(core.cover(deadline: 40 * ms, at: 5 * ms))
        #expect(core.next(at: 5 * ms) == .wait(until: 38 * ms))
        #expect(core.next(at: 38 * ms) == .spin(until: 40 * ms))
        #expect(core.next(at: 39 * ms) == .spin(until: 40 * ms))
        #expect(core.next(at: 40 * ms) == .idle)
        #expect(core.windows.isEmpty)
        // A deadline nearer than the lead is covered from now; one already past is not.
        #expect(core.cover(deadline: 41 * ms, at: 40 * ms))
        #expect(core.next(at: 40 * ms) == .spin(until: 41 * ms))
        #expect(!core.cover(deadline: 40 * ms, at: 41 * ms))
    }

    @Test func windowsThatMeetAreMergedAndTheEarliestComesFirst() {
        let core = Self.engaged()
        #expect(core.cover(deadline: 40 * ms, at: 5 * ms))
        // Four players a few microseconds apart, and the same one asking again: one window.
        #expect(!core.cover(deadline: 40 * ms + 50_000, at: 5 * ms))
        #expect(!core.cover(deadline: 40 * ms, at: 6 * ms))
        #expect(core.windows == [38 * ms..<(40 * ms + 50_000)])
        // Another frame's window, later, stays apart; an earlier one tells the warmers.
        #expect(!core.cover(deadline: 73 * ms, at: 6 * ms))
        #expect(core.cover(deadline: 20 * ms, at: 6 * ms))
        #expect(core.windows == [18 * ms..<20 * ms, 38 * ms..<(40 * ms + 50_000), 71 * ms..<73 * ms])
        #expect(core.next(at: 19 * ms) == .spin(until: 20 * ms))
        #expect(core.next(at: 20 * ms) == .wait(until: 38 * ms))
        // One that overlaps a window widens it, and tells the warmers when it opens earlier.
        #expect(!core.cover(deadline: 72 * ms, at: 21 * ms))
        #expect(core.cover(deadline: 39 * ms, at: 21 * ms))
        #expect(core.windows == [37 * ms..<(40 * ms + 50_000), 70 * ms..<73 * ms])
        // One that only touches a window joins it.
        #expect(!core.cover(deadline: 42 * ms + 50_000, at: 21 * ms))
        #expect(core.windows == [37 * ms..<(42 * ms + 50_000), 70 * ms..<73 * ms])
        #expect(core.cover(deadline: 30 * ms, at: 21 * ms))
        #expect(core.windows.count == 3)
        #expect(core.next(at: 30 * ms) == .wait(until: 37 * ms))
        #expect(core.next(at: 41 * ms) == .spin(until: 42 * ms + 50_000))
    }

    @Test func theGuardLetsGoFiveMinutesAfterTheLastLateWake() {
        let core = Self.engaged()
        let lastLate = 1 * ms + 500_000
        let hold = WakeGuardCore.Configuration().hold
        #expect(hold == 300_000 * ms)
        #expect(core.isEngaged(at: lastLate + hold - 1 * ms))
        #expect(core.cover(deadline: lastLate + hold - 1 * ms + 500_000, at: lastLate + hold - 1 * ms))
        // The window is left to run out, but nothing is spun once the hold is over.
        #expect(!core.isEngaged(at: lastLate + hold))
        #expect(core.next(at: lastLate + hold) == .idle)
        #expect(!core.cover(deadline: lastLate + hold + 10 * ms, at: lastLate + hold))
        // A late wake in the meantime keeps it engaged for the hold from then.
        let kept = Self.engaged()
        #expect(!kept.woke(deadline: 30_000 * ms, at: 30_001 * ms))
        #expect(kept.isEngaged(at: 30_001 * ms + hold - 1))
        #expect(!kept.isEngaged(at: 30_001 * ms + hold))
        // And one after it let go engages it again.
        #expect(core.woke(deadline: lastLate + hold + 70 * ms, at: lastLate + hold + 72 * ms))
    }

    @Test func theWindowsKeptAreBounded() {
        var configuration = WakeGuardCore.Configuration()
        configuration.windowLimit = 4
        let core = Self.engaged(configuration)
        for frame in 1...10 { _ = core.cover(deadline: Int64(frame) * 33 * ms, at: 2 * ms) }
        #expect(core.windows.count == 4)
        #expect(core.windows.last == 130 * ms..<132 * ms)
        // An earlier one still gets in, and the latest goes.
        #expect(core.cover(deadline: 20 * ms, at: 2 * ms))
        #expect(core.windows.first == 18 * ms..<20 * ms)
        #expect(core.windows.last == 97 * ms..<99 * ms)
    }
}

/// A warmer's backoff (`WarmerBackoff`): one that got less than half a window leaves its
/// processor alone for a second.
@Suite struct WarmerBackoffTests {
    @Test func aWarmerThatRanMostOfAWindowKeepsSpinningAndOneThatDidNotRests() {
        var backoff = WarmerBackoff()
        #expect(backoff.spins(at: 0))
        // An idle processor: it ran 1.9 ms of 2.
        backoff.spun(span: 2 * ms, ran: 1_900_000, at: 2 * ms)
        #expect(backoff.spins(at: 2 * ms))
        // A busy one: 0.6 ms of 2. A second's rest, then a try.
        backoff.spun(span: 2 * ms, ran: 600_000, at: 35 * ms)
        #expect(!backoff.spins(at: 35 * ms))
        #expect(!backoff.spins(at: 1_034 * ms))
        #expect(backoff.spins(at: 1_035 * ms))
        // A try that finds it idle again ends the rest for good.
        backoff.spun(span: 2 * ms, ran: 1_500_000, at: 1_037 * ms)
        #expect(backoff.spins(at: 1_038 * ms))
        // A window too short to tell by changes nothing.
        backoff.spun(span: 100_000, ran: 0, at: 1_040 * ms)
        #expect(backoff.spins(at: 1_041 * ms))
    }
}

/// The shell (`WakeGuard`) with real threads: a late wake starts a warmer per processor, each
/// pinned to its processor at the idle policy, and they spin through a window and stop after it.
/// No speed is asserted; CPU time is read from `/proc` (`schedstat`, nanoseconds).
@Suite struct WakeGuardIOTests {
    /// This process's threads named `tandem-warm-N`, by kernel thread id.
    static func warmers() -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter { task in
            ((try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? "").hasPrefix("tandem-warm-")
        }
    }

    /// The nanoseconds `tasks` have run, summed.
    static func cpuTime(_ tasks: [String]) -> Int64 {
        tasks.reduce(0) { sum, task in
            let line = (try? String(contentsOfFile: "/proc/self/task/\(task)/schedstat", encoding: .utf8)) ?? ""
            return sum + (line.split(separator: " ").first.flatMap { Int64($0) } ?? 0)
        }
    }

    @Test func aLateWakeStartsPinnedIdleWarmersThatSpinThroughAWindowAndThenStop() throws {
        var configuration = WakeGuardCore.Configuration()
        configuration.lead = 150_000_000
        let guarded = WakeGuard(configuration: configuration)
        let before = Set(Self.warmers())
        #expect(guarded.warmerCount == 0)
        guarded.cover(deadline: HostInstant.now().nanoseconds + 10_000_000)
        #expect(!guarded.isEngaged)
        guarded.woke(deadline: HostInstant.now().nanoseconds - 1_000_000)
        #expect(guarded.isEngaged)
        let processors = WakeGuard.processors()
        #expect(guarded.warmerCount == processors.count)

        // Their threads: wait until they have named themselves and set their policy.
        var started: [String] = []
        for _ in 0..<200 where started.count < processors.count {
            Thread.sleep(forTimeInterval: 0.01)
            started = Self.warmers().filter { !before.contains($0) }
        }
        try #require(started.count == processors.count)
        var pinned: [String] = []
        for task in started {
            let stat = try String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8)
            // After the command's closing parenthesis, field 41 (policy) is the 39th.
            let fields = stat[stat.range(of: ")")!.upperBound...].split(separator: " ")
            #expect(fields[38] == "5", "SCHED_IDLE is policy 5; task \(task) has \(fields[38])")
            let status = try String(contentsOfFile: "/proc/self/task/\(task)/status", encoding: .utf8)
            if let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed_list:") }) {
                pinned.append(line.split(separator: "\t").last.map(String.init) ?? "")
            }
        }
        #expect(Set(pinned) == Set(processors.map(String.init)), "each on its own processor: \(pinned)")

        // A window: they run during it (whatever else runs, an idle-policy thread gets a share),
        // and not after it.
        let quiet = Self.cpuTime(started)
        let deadline = HostInstant.now().nanoseconds + 200_000_000
        guarded.cover(deadline: deadline)
        Thread.sleep(forTimeInterval: Double(deadline - HostInstant.now().nanoseconds) / 1e9 + 0.02)
        let spun = Self.cpuTime(started)
        #expect(spun - quiet > 0, "no warmer ran in a 150 ms window")
        Thread.sleep(forTimeInterval: 0.2)
        let after = Self.cpuTime(started)
        #expect(after - spun < 20_000_000, "warmers ran \((after - spun) / 1_000_000) ms with no window")
    }
}
