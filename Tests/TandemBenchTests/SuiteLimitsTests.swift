import Foundation
import Testing
@testable import TandemBench

/// The CI limits of `tandem bench all --check`, and the CPU and memory sampler behind the
/// per-peer figures.
@Suite struct SuiteLimitsProcessTests {
    static func run(_ mode: SyncMode, p99: Double, frames: Int = 100, errors: [String] = []) -> ModeResult {
        return ModeResult(mode: mode, spread: Percentiles(Array(repeating: p99, count: frames)), clockError: mode == .coordinator ? Percentiles([0.1]) : nil,
                          commandToEffect: nil, convergence: nil, convergenceEvents: 0, notConverged: 0, framesPresented: frames,
                          framesDropped: 0, peers: [], spreadSeries: [], clockErrorSeries: [], errors: errors)
    }

    static func report(_ runs: [ModeResult]) -> SuiteReport {
        SuiteReport(date: "2026-11-29T00:00:00Z", machine: "test", quick: true, seconds: 1, scenarios: [
            ScenarioResult(name: "steady", summary: "", peers: 3, player: "builtin", network: "loopback", runs: runs),
        ])
    }

    @Test func aGoodRunKeepsTheLimits() {
        #expect(SuiteLimits().violations(SuiteLimitsProcessTests.report([SuiteLimitsProcessTests.run(.onReceipt, p99: 40),
                                                                  SuiteLimitsProcessTests.run(.coordinator, p99: 0.5)])).isEmpty)
    }

    @Test func eachBreachIsNamed() {
        let limits = SuiteLimits()
        let slow = limits.violations(SuiteLimitsProcessTests.report([SuiteLimitsProcessTests.run(.onReceipt, p99: 40),
                                                              SuiteLimitsProcessTests.run(.coordinator, p99: 12)]))
        #expect(slow.count == 1 && slow[0].contains("steady, tandem: spread p99 12.000 ms is over 10.000 ms"))
        let missing = limits.violations(SuiteLimitsProcessTests.report([SuiteLimitsProcessTests.run(.coordinator, p99: 0.5)]))
        #expect(missing == ["steady: no apply on receipt run"])
        let failed = limits.violations(SuiteLimitsProcessTests.report([SuiteLimitsProcessTests.run(.onReceipt, p99: 40, errors: ["peer-1 exited with status 1"]),
                                                                SuiteLimitsProcessTests.run(.coordinator, p99: 0.5, frames: 5)]))
        #expect(failed.contains("steady, apply on receipt: peer-1 exited with status 1"))
        #expect(failed.contains { $0.contains("only 5 frames compared") })
    }

    @Test func theSamplerReadsCPUAndMemoryOfAProcessAndItsChildren() throws {
        let sampler = ProcessUsageSampler(interval: 0.05)
        defer { sampler.stop() }
        // A shell that keeps a child busy for a bounded count of iterations, then exits.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "sh -c 'i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done'; sleep 0.3"]
        try process.run()
        sampler.follow(process.processIdentifier)
        process.waitUntilExit()
        let usage = try #require(sampler.usage(of: process.processIdentifier))
        #expect(usage.cpuSeconds > 0, "the busy child's CPU time is counted")
        #expect(usage.peakResidentBytes > 0)
        #expect(sampler.usage(of: 999_999_999) == nil)
    }
}
