#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization
import TandemClock

/// A recording's file (`PulseAudioServer.record`, raw 16-bit little-endian samples) watched as it
/// grows, against the machine's monotonic clock: frame `n` was in the file by the first instant
/// the file was seen holding it, which bounds from above when the sink rendered it (`clock(breaks:)`).
public final class AudioRecordingWatch: Sendable {
    /// The raw file.
    public let path: String
    /// Channels per frame.
    public let channels: Int
    private let watch = Watch()
    private let watcher = DispatchGroup()

    /// The file's growth and whether to go on watching it, shared with the watching thread.
    private final class Watch: Sendable {
        let growth = Mutex<[(instant: Int64, frames: Int)]>([])
        let watching = Mutex(true)
    }

    /// Watches `path`, a recording of `channels` channels, from now until `stop()`.
    public init(path: String, channels: Int) {
        self.path = path
        self.channels = channels
        let bytesPerFrame = channels * 2
        DispatchQueue.global().async(group: watcher) { [watch, path] in
            let clock = SystemClock()
            var last = -1
            while watch.watching.withLock({ $0 }) {
                let size = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
                let frames = size / bytesPerFrame
                if frames != last {
                    let instant = clock.now()
                    watch.growth.withLock { $0.append((instant, frames)) }
                    last = frames
                }
                usleep(1_000)
            }
        }
    }

    deinit { stop() }

    /// Frames recorded so far.
    public var frames: Int { watch.growth.withLock { $0.last?.frames ?? 0 } }

    /// Waits at most `timeout` seconds until the file grows by `frames` frames; whether it did.
    public func waitUntilFlowing(frames wanted: Int = 2_400, timeout: Double = 10) -> Bool {
        let start = frames
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if frames - start >= wanted { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return false
    }

    /// The file's growth so far: each instant (monotonic ns) the file was seen holding a new
    /// count of frames.
    public var growth: [(instant: Int64, frames: Int)] { watch.growth.withLock { $0 } }

    /// Where the recording's frames sit on the machine's clock, fitted to the file's growth
    /// (`RecordingClock.fit`), each stretch between two of `breaks` (monotonic ns: the changes,
    /// at which the sink may rewind) with an origin of its own; nil before anything was recorded.
    public func clock(breaks: [Int64] = []) -> RecordingClock? {
        RecordingClock.fit(growth: growth, breaks: breaks, nominalPeriod: 1e9 / Double(AudioBenchSignal.sampleRate))
    }

    /// Stops watching the file.
    public func stop() {
        watch.watching.withLock { $0 = false }
        _ = watcher.wait(timeout: .now() + 2)
    }

    /// The recording, one array of samples (full scale 1) per channel.
    public func channelSamples() throws -> [[Float]] {
        try AudioRecordingWatch.samples(path: path, channels: channels)
    }

    /// The recording at `path` (raw s16le, `channels` interleaved), one array of samples (full
    /// scale 1) per channel.
    static func samples(path: String, channels: Int) throws -> [[Float]] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let frames = data.count / (channels * 2)
        var result = [[Float]](repeating: [Float](repeating: 0, count: frames), count: channels)
        data.withUnsafeBytes { raw in
            for frame in 0..<frames {
                for channel in 0..<channels {
                    let offset = (frame * channels + channel) * 2
                    let value = Int16(bitPattern: UInt16(raw[offset]) | UInt16(raw[offset + 1]) << 8)
                    result[channel][frame] = Float(value) / 32768
                }
            }
        }
        return result
    }
}
