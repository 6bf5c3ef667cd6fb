import Foundation
import Testing
import TandemBench
import TandemTestKit
import TandemHarness

/// `tandem bench all --quick --check` as CI runs it on every submission: the short suite, both
/// modes, the report's files, and loose limits (a correctness bound on a noisy shared machine,
/// not a speed claim: the full suite in release mode measures).
@Suite struct BenchSuiteProcessTests {
    @Test func theQuickSuiteRunsBothModesAndWritesItsReport() throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("tandem-bench-all-\(UUID().uuidString)")
        let logs = out.appendingPathComponent("logs")
        defer { try? FileManager.default.removeItem(at: out) }
        let run = try TandemProcess.run(["bench", "all", "--quick", "--check", "--out", out.path, "--keep-logs", logs.path,
                                         "--clip", SampleClip.directory + "/watch-together.mp4"],
                                        timeout: 240)
        #expect(run.status == 0, "\(run.standardError.suffix(2000))")

        let report = try JSONDecoder().decode(SuiteReport.self, from: Data(contentsOf: out.appendingPathComponent("report.json")))
        #expect(report.quick)
        #expect(report.scenarios.map(\.name) == Scenario.quickCatalogue.map(\.name))
        for scenario in report.scenarios {
            let baseline = try #require(scenario.run(.onReceipt))
            let ours = try #require(scenario.run(.coordinator))
            #expect(baseline.errors.isEmpty && ours.errors.isEmpty, "\(baseline.errors) \(ours.errors)")
            // Every peer presented frames and was measured.
            #expect(ours.peers.count == scenario.peers && ours.peers.allSatisfy { ($0.peakMemoryMiB ?? 0) > 1 })
            #expect((ours.spread?.count ?? 0) >= 30 && (baseline.spread?.count ?? 0) >= 30)
            #expect(ours.clockErrorSeries.count == scenario.peers && baseline.clockErrorSeries.isEmpty)
            #expect(ours.commandToEffect != nil && ours.convergenceEvents >= 1)
            for chart in ["spread", "clock", "distribution"] {
                #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("\(scenario.name)-\(chart).svg").path))
            }
        }
        // --keep-logs: each peer's presentation log, and its events, each after the ms since its
        // process started, the `joined` event among them.
        for name in ["steady-coordinator-peer-0", "impaired-on-receipt-peer-2"] {
            let frames = try String(contentsOf: logs.appendingPathComponent(name + ".jsonl"), encoding: .utf8)
            #expect(frames.contains("\"presented_ns\""))
            let events = try String(contentsOf: logs.appendingPathComponent(name + ".out"), encoding: .utf8).split(separator: "\n")
            #expect(events.first?.hasPrefix("# peer-") == true)
            let joined = try #require(events.first { $0.contains("\"event\":\"joined\"") })
            let milliseconds = try #require(Double(joined.split(separator: " ").first ?? ""))
            #expect(milliseconds > 0 && milliseconds < 60_000)
            #expect(FileManager.default.fileExists(atPath: logs.appendingPathComponent(name + ".err").path))
        }
        let index = try String(contentsOf: out.appendingPathComponent("index.html"), encoding: .utf8)
        #expect(index.contains("impaired-spread.svg"))
        // The table on standard output: a row per scenario and mode.
        #expect(run.standardOutput.split(separator: "\n").filter { $0.hasPrefix("| steady |") || $0.hasPrefix("| impaired |") }.count == 4)
    }

    @Test func anUnknownScenarioIsAUsageError() throws {
        let run = try TandemProcess.run(["bench", "all", "--quick", "--scenario", "nonesuch"], timeout: 20)
        #expect(run.status == 64)
        #expect(run.standardError.contains("no scenario 'nonesuch' in the quick suite: steady, impaired"))
    }
}
