import Foundation
import TandemMedia
import TandemClock
import TandemMediaTypes

/// Presentation lateness of one player against its own schedule, read back from its
/// presentation log, for each way of waiting for a deadline, in one run.
public struct PresentationBenchmark: Sendable {
    /// One way of waiting, and what it achieved.
    public struct Row: Sendable, Codable {
        /// How the presentation thread waited.
        public var mode: String
        /// Frames presented on schedule.
        public var frames: Int
        /// Frames dropped late.
        public var dropped: Int
        /// Lateness in milliseconds (`presented_ns - scheduled_ns` from the log); nil when no
        /// frame was presented.
        public var latenessMilliseconds: Percentiles?
    }

    /// The file to play.
    public var file: String
    /// Plays per mode; each play runs the whole file.
    public var runs: Int
    /// The playing rate.
    public var rate: Double

    /// A benchmark of `file`, `runs` plays per mode at `rate`.
    public init(file: String, runs: Int, rate: Double = 1) {
        self.file = file
        self.runs = max(1, runs)
        self.rate = rate
    }

    /// Plays the file in each mode in turn, `runs` times, and reports each mode's lateness.
    public func run() throws -> [Row] {
        let modes: [(String, TimeSpan)] = [
            ("timed wait (timer slack 1 ns)", .zero),
            ("timed wait + 200 us spin", .microseconds(200)),
        ]
        var rows = modes.map { Row(mode: $0.0, frames: 0, dropped: 0, latenessMilliseconds: nil) }
        var samples = [[Double]](repeating: [], count: modes.count)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tandem-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for run in 0..<runs {
            for (index, mode) in modes.enumerated() {
                let path = directory.appendingPathComponent("run-\(run)-\(index).jsonl").path
                let log = try PresentationLog(path: path)
                var options = HeadlessPlayer.Options()
                options.spinAhead = mode.1
                let timeline = PresentationTimeline(rate: rate, anchorItemTime: .zero, anchorHostTime: .now() + .milliseconds(200))
                let player = try HeadlessPlayer(url: file, options: options, videoSinks: [log], timeline: timeline)
                player.waitUntilEnded(timeout: 3600)
                let statistics = player.statistics
                player.close()
                log.close()
                let records = try PresentationRecord.read(path: path).filter { $0.still != true }
                samples[index] += records.map { Double($0.presentedNanoseconds - $0.scheduledNanoseconds) / 1e6 }
                rows[index].frames += statistics.presentedFrames
                rows[index].dropped += statistics.droppedLateFrames
            }
        }
        for index in rows.indices {
            rows[index].latenessMilliseconds = Percentiles(samples[index])
        }
        return rows
    }
}
