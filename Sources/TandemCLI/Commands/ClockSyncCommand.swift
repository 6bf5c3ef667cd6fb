import Foundation
import TandemBench
import TandemClock
import TandemNet

/// `tandem clock sync`: a participant that synchronizes to a time service and reports how well.
///
/// `--clock-offset` and `--clock-drift-ppm` are a benchmarking aid: they make this process's local
/// clock run off the system clock, so that a time service on the same machine still presents a
/// real offset and drift to estimate.
struct ClockSyncCommand: Command {
    static let words = ["clock", "sync"]
    static let usage = "clock sync HOST:PORT [--duration SECONDS] [--clock-offset SECONDS] [--clock-drift-ppm PPM] [--json]"
    static let summary = "synchronize to a time service and print the estimate (offset/drift flags: benchmarking aid)"

    private struct Summary: Codable {
        var server: String
        var durationSeconds: Double
        var injectedOffsetSeconds: Double
        var injectedDriftPPM: Double
        var statistics: SessionClockStatistics?
        var polling: ClockPollingPolicy.Statistics
    }

    static func run(_ arguments: [String]) async throws -> Int32 {
        let options = try Arguments(arguments, options: ["duration", "clock-offset", "clock-drift-ppm"], flags: ["json"])
        try options.expectPositionals(atMost: 1)
        let target = try options.positional(0, "time service address (HOST:PORT)")
        let duration = try options.double("duration", default: 10)!
        let offset = try options.double("clock-offset", default: 0)!
        let drift = try options.double("clock-drift-ppm", default: 0)!
        guard duration > 0, duration <= 86_400 else { throw CLIError.usage("--duration must be between 0 and 86400 seconds") }
        guard abs(drift) < 100_000 else { throw CLIError.usage("--clock-drift-ppm must be within ±100000") }
        guard abs(offset) < 1e9 else { throw CLIError.usage("--clock-offset is too large") }
        let server: SocketAddress
        do {
            server = try SocketAddress(parsing: target)
        } catch {
            throw CLIError.usage("\(error)")
        }
        let system = SystemClock()
        let local = SkewedClock(base: system, offset: Int64(offset * 1e9), driftPPM: drift, origin: system.instant().nanoseconds)
        let prober: ClockProber
        do {
            prober = try ClockProber(server: server, clock: local)
        } catch {
            throw CLIError.failure("cannot probe \(server): \(error)")
        }
        let json = options.flags.contains("json")
        prober.start()
        let end = system.instant().nanoseconds + Int64(duration * 1e9)
        // One status line a second (the last interval may be shorter).
        while case let remaining = end - system.instant().nanoseconds, remaining > 0 {
            try await Task.sleep(for: .nanoseconds(min(remaining, 1_000_000_000)))
            if !json, let statistics = prober.sessionClock.statistics(atLocal: local.instant()) {
                print("offset \(seconds(statistics.offset))  ±\(ClockBenchmarkTable.duration(Double(statistics.errorBound)))  drift \(String(format: "%+.2f", statistics.driftPPM)) ppm  best RTT \(ClockBenchmarkTable.duration(Double(statistics.bestRoundTrip)))")
                fflush(nil)
            }
        }
        prober.stop()
        let summary = Summary(
            server: server.description, durationSeconds: duration, injectedOffsetSeconds: offset, injectedDriftPPM: drift,
            statistics: prober.sessionClock.statistics(atLocal: local.instant()), polling: prober.pollingStatistics
        )
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(summary), as: UTF8.self))
        } else {
            printSummary(summary)
        }
        return summary.statistics == nil ? 1 : 0
    }

    /// Nanoseconds as signed seconds to the nanosecond: offsets are seconds big and microseconds fine.
    private static func seconds(_ nanoseconds: Int64) -> String {
        String(format: "%+.9f s", Double(nanoseconds) / 1e9)
    }

    private static func printSummary(_ summary: Summary) {
        let polling = summary.polling
        print("probes: \(polling.sent) sent, \(polling.answered) answered, \(polling.lost) lost, \(polling.duplicates) duplicates, \(polling.ignored) ignored")
        guard let statistics = summary.statistics else {
            printError("tandem: no reply from \(summary.server) within \(summary.durationSeconds) s")
            return
        }
        print("""
            session − local offset: \(seconds(statistics.offset)) \
            (includes the injected \(summary.injectedOffsetSeconds) s)
            drift: \(String(format: "%+.3f", statistics.driftPPM)) ppm (includes the injected \(summary.injectedDriftPPM) ppm, with opposite sign)
            error bound: \(ClockBenchmarkTable.duration(Double(statistics.errorBound))) (plus up to half the best round trip of path asymmetry)
            round trip: best \(ClockBenchmarkTable.duration(Double(statistics.bestRoundTrip))), median \(ClockBenchmarkTable.duration(Double(statistics.medianRoundTrip)))
            samples: \(statistics.samplesKept) kept, \(statistics.samplesRejected) rejected
            """)
    }
}
