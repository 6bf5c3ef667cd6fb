import Foundation
import Testing
@testable import TandemBench
import TandemNet

/// The attackers' CPU cgroup on this machine's cgroup v1 `cpu` controller: made with its quota,
/// a thread moved in, and removed with the thread still running.
@Suite struct RelayAttackerBudgetIOTests {
    @Test func aGroupHoldsItsQuotaAndThreadAndIsRemoved() throws {
        let budget: RelayAttackerBudget
        do {
            budget = try RelayAttackerBudget(name: "tandem-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))", share: 0.5)
        } catch {
            // No controller or no permission: the benchmark says so and runs uncapped; so must this.
            #expect("\(error)".contains("cgroup"))
            return
        }
        let quota = try String(contentsOfFile: budget.path + "/cpu.cfs_quota_us", encoding: .utf8)
        let period = try String(contentsOfFile: budget.path + "/cpu.cfs_period_us", encoding: .utf8)
        #expect(quota.trimmingCharacters(in: .whitespacesAndNewlines) == "50000")
        #expect(period.trimmingCharacters(in: .whitespacesAndNewlines) == "100000")

        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let thread = ThreadBox()
        Thread.detachNewThread {
            thread.id = SocketTimestamping.currentThreadID()
            started.signal()
            release.wait()
        }
        started.wait()
        try budget.admit(thread: thread.id)
        #expect(budget.threads == [thread.id])
        try budget.remove()
        release.signal()
        #expect(!FileManager.default.fileExists(atPath: budget.path))
        #expect(throws: RelayBenchmarkError.self) { try RelayAttackerBudget(name: "x", share: 0) }
    }
}

private final class ThreadBox: @unchecked Sendable {
    var id: Int32 = 0
}
