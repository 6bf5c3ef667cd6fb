import Foundation
import TandemMedia
import TandemClock

/// Decode throughput: Tandem's decoder against the ffmpeg command line on the same file with
/// the same number of decoding threads, runs interleaved so that both see the same machine.
public struct DecodeBenchmark: Sendable {
    /// One side's runs.
    public struct Side: Sendable, Codable {
        /// Frames decoded in each run.
        public var frames: Int
        /// Seconds each run took.
        public var seconds: [Double]
        /// Frames per second of the median run.
        public var medianFramesPerSecond: Double {
            guard frames > 0, let median = Percentiles(seconds)?.p50, median > 0 else { return 0 }
            return Double(frames) / median
        }
    }

    /// The result of a benchmark.
    public struct Result: Sendable, Codable {
        /// The file decoded.
        public var file: String
        /// Decoding threads on both sides.
        public var threads: Int
        /// Tandem's decoder (MediaDecoder), video only.
        public var tandem: Side
        /// `ffmpeg -threads N -i FILE -map 0:v:0 -f null -`, timed by its own `-benchmark`
        /// (the decoding loop, without process start-up), or nil when ffmpeg is not installed.
        public var ffmpeg: Side?
        /// Tandem's median frames per second over ffmpeg's.
        public var ratio: Double? {
            guard let ffmpeg, ffmpeg.medianFramesPerSecond > 0 else { return nil }
            return tandem.medianFramesPerSecond / ffmpeg.medianFramesPerSecond
        }
    }

    /// The file to decode.
    public var file: String
    /// Decoding threads (1 or more).
    public var threads: Int
    /// Runs per side.
    public var runs: Int

    /// A benchmark of `file` with `threads` threads, `runs` runs per side.
    public init(file: String, threads: Int, runs: Int) {
        self.file = file
        self.threads = max(1, threads)
        self.runs = max(1, runs)
    }

    /// Runs both sides, alternating.
    public func run() throws -> Result {
        let ffmpegPath = DecodeBenchmark.findExecutable("ffmpeg")
        var ours = Side(frames: 0, seconds: [])
        var theirs: Side? = ffmpegPath == nil ? nil : Side(frames: 0, seconds: [])
        for _ in 0..<runs {
            let (frames, seconds) = try decodeWithTandem()
            ours.frames = frames
            ours.seconds.append(seconds)
            if let ffmpegPath {
                theirs?.seconds.append(try decodeWithFFmpeg(ffmpegPath))
                theirs?.frames = frames
            }
        }
        return Result(file: file, threads: threads, tandem: ours, ffmpeg: theirs)
    }

    private func decodeWithTandem() throws -> (Int, Double) {
        let media = try MediaFile(url: file)
        let decoder = try MediaDecoder(file: media, decodeVideo: true, decodeAudio: false, threads: threads)
        let start = HostInstant.now()
        var frames = 0
        while let decoded = try decoder.next() {
            if case .video = decoded { frames += 1 }
        }
        return (frames, (HostInstant.now() - start).seconds)
    }

    private func decodeWithFFmpeg(_ executable: String) throws -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["-nostdin", "-hide_banner", "-nostats", "-benchmark", "-threads", String(threads),
                             "-i", file, "-map", "0:v:0", "-f", "null", "-"]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let output = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: output, as: UTF8.self)
        guard process.terminationStatus == 0,
              let range = text.range(of: #"rtime=([0-9.]+)s"#, options: .regularExpression) else {
            throw BenchmarkError("ffmpeg failed on \(file): \(text.split(separator: "\n").last ?? "")")
        }
        let value = text[range].dropFirst("rtime=".count).dropLast()
        guard let seconds = Double(value) else { throw BenchmarkError("cannot read ffmpeg's time from '\(text[range])'") }
        return seconds
    }

    /// The path of `name` on PATH, if it is there.
    public static func findExecutable(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}

/// A benchmark that could not run, with the reason.
public struct BenchmarkError: Error, CustomStringConvertible {
    /// Why.
    public let description: String

    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}
