import Foundation
import Testing
import Tandem
import TandemClock
import TandemNet
import TandemPlayback
import TandemTestKit
import TandemMpv
import TandemMediaTypes

/// The readings a coordinated mpv writes to a presentation log: how often, how they advance, and
/// how far from the shared timeline (the on-receipt baseline's mpv, driven from outside: in
/// `TandemBenchTests`, and `MpvWatchTests` through `tandem`).
@Suite(.serialized, .timeLimit(.minutes(1))) struct MpvReadingProcessTests {
    /// A fresh log under the temporary directory.
    static func logPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("tandem-readings-\(UUID().uuidString.prefix(8)).jsonl").path
    }

    /// Headless mpv writing its readings to `log`.
    static func options(log: PresentationLog) -> MpvPlayer.Options {
        var options = MpvFixture.headless(ipcPath: MpvFixture.socketPath())
        options.presentationLog = log
        return options
    }

    /// The readings of a playing group presented within `window` (raw monotonic ns).
    static func playing(_ records: [PresentationRecord], _ window: ClosedRange<Int64>) -> [PresentationRecord] {
        records.filter { $0.reading == true && $0.still != true && window.contains($0.presentedNanoseconds) }
    }

    /// Readings per second over `window`, and the longest gap between two of them (ms).
    static func cadence(_ readings: [PresentationRecord], _ window: ClosedRange<Int64>) -> (perSecond: Double, longestGap: Double) {
        let instants = readings.map(\.presentedNanoseconds).sorted()
        let gaps = zip(instants, instants.dropFirst()).map { Double($1 - $0) / 1e6 }
        return (Double(instants.count) / (Double(window.upperBound - window.lowerBound) / 1e9), gaps.max() ?? .infinity)
    }

    /// Media seconds per second of the readings: the slope of a least-squares line through them.
    static func slope(_ readings: [PresentationRecord]) -> Double {
        guard let first = readings.first, readings.count > 1 else { return .nan }
        let xs = readings.map { Double($0.presentedNanoseconds - first.presentedNanoseconds) / 1e9 }
        let ys = readings.map(\.pts)
        let (mx, my) = (xs.reduce(0, +) / Double(xs.count), ys.reduce(0, +) / Double(ys.count))
        let covariance = zip(xs, ys).map { ($0 - mx) * ($1 - my) }.reduce(0, +)
        let variance = xs.map { ($0 - mx) * ($0 - mx) }.reduce(0, +)
        return covariance / variance
    }

    /// presented − scheduled of each reading (ms): positive, mpv is behind the timeline.
    static func lateness(_ readings: [PresentationRecord]) -> [Double] {
        readings.map { Double($0.presentedNanoseconds - $0.scheduledNanoseconds) / 1e6 }
    }

    /// The raw monotonic instant of `coordinator`'s current anchor (the system clock is raw).
    static func effectiveInstant(_ coordinator: PlaybackCoordinator) throws -> Int64 {
        try #require(coordinator.hostTime(atSessionTime: coordinator.timeline.anchorSessionTime)).nanoseconds
    }

    /// The first instant (a reply's midpoint) at which mpv's `property` satisfies `condition`,
    /// polling every 5 ms for at most `seconds`.
    static func firstInstant(_ mpv: MpvConnection, _ property: String, within seconds: Double = 5,
                             where condition: (MpvValue) -> Bool) async throws -> Int64? {
        // Bounded: at most `seconds` of 5 ms steps.
        for _ in 0..<Int(seconds * 200) {
            let reply = try await mpv.command(["get_property", .string(property)])
            if condition(reply.value) { return reply.midpoint }
            try await Task.sleep(for: .milliseconds(5))
        }
        return nil
    }

    @Test func aCoordinatedMpvLogsReadingsOnTheSharedTimeline() async throws {
        let path = Self.logPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let log = try PresentationLog(path: path)
        defer { log.close() }
        try await MpvGroup.with(options: Self.options(log: log)) { host, guest, mpv, _, other in
            try await Task.sleep(for: .milliseconds(500))
            let playAsked = HostInstant.now().nanoseconds
            host.coordinator.coordinateRateChange(to: 1)
            #expect(await other.awaitProperty("pause") { $0.bool == false })
            try await Task.sleep(for: .seconds(2))
            let normal = HostInstant.now().nanoseconds...(HostInstant.now().nanoseconds + 3_000_000_000)
            try await Task.sleep(for: .seconds(3))
            host.coordinator.coordinateRateChange(to: 1.5)
            #expect(await awaitTimeline(of: guest.coordinator) { $0.rate == 1.5 })
            try await Task.sleep(for: .seconds(2))
            let fast = HostInstant.now().nanoseconds...(HostInstant.now().nanoseconds + 2_500_000_000)
            try await Task.sleep(for: .seconds(2.6))
            log.flush()
            let records = try PresentationRecord.read(path: path)
            #expect(records.allSatisfy { $0.reading == true && $0.item == mpv.itemIdentifier })
            #expect(mpv.statistics.readings >= records.count && records.count > 0)

            // Paused before the play: still readings, at the instant they were taken. (Once the
            // play is asked, mpv holds still on the frame it starts from until its instant:
            // still readings too, of that frame.)
            let stills = records.filter { $0.still == true && $0.presentedNanoseconds < playAsked }
            #expect(!stills.isEmpty)
            #expect(stills.allSatisfy { $0.scheduledNanoseconds == $0.presentedNanoseconds && $0.pts < 0.001 })
            #expect(records.filter { $0.still == true }.allSatisfy { $0.scheduledNanoseconds == $0.presentedNanoseconds })

            for (window, rate) in [(normal, 1.0), (fast, 1.5)] {
                let readings = Self.playing(records, window)
                let cadence = Self.cadence(readings, window)
                #expect(cadence.perSecond >= 8, "readings per second at rate \(rate): \(cadence.perSecond)")
                #expect(cadence.longestGap < 150, "longest gap between readings (ms) at rate \(rate): \(cadence.longestGap)")
                let slope = Self.slope(readings)
                #expect(abs(slope - rate) < 0.03 * rate, "media seconds per second: \(slope), the group's rate \(rate)")
                // mpv starts on the timeline to a fraction of a ms (the rate change is a start
                // too), and the policy corrects beyond ±1.5 ms; a reading is good to half its round
                // trip, a fraction of a ms but a few ms when the machine is busy: so the median is
                // within 2 ms, and every reading within 10 ms.
                let lateness = Self.lateness(readings)
                let median = lateness.isEmpty ? .infinity : lateness.map(abs).sorted()[lateness.count / 2]
                #expect(median < 2, "median |presented − scheduled| at rate \(rate) (ms): \(median) of \(lateness)")
                #expect(lateness.allSatisfy { abs($0) < 10 }, "presented − scheduled at rate \(rate) (ms): \(lateness)")
            }
            #expect(mpv.statistics.measurements > 0)
            #expect(mpv.statistics.starts >= 2, "\(mpv.statistics)")
        }
    }
}
