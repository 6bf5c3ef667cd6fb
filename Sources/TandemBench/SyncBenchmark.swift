import Foundation
import TandemClock

/// Peers in separate processes on loopback, each with its own injected clock offset and drift,
/// watching one clip together through a scripted session: the spread between them of the
/// instant each frame is presented, command-to-effect times, and a late joiner.
///
/// Each peer is the `tandem` executable itself (`tandem host` for the first, `tandem join` for
/// the rest) writing a presentation log; the benchmark drives the host's standard input, reads
/// every peer's `--events json`, and reads the logs afterwards. The whole run is bounded (about
/// 30 s; any peer still running at the end is killed).
public struct SyncBenchmark: Sendable {
    /// Peers from the start, the host included.
    public var peers: Int
    /// The clip to play; nil makes a 20 s test pattern with ffmpeg.
    public var clip: String?
    /// The `tandem` executable to run as each peer.
    public var executable: String

    /// The script: each command, then how long to let it play (seconds).
    static let script: [(command: String, hold: Double)] = [
        ("play", 3), ("pause", 1), ("seek 10", 0.6), ("rate 1.5", 3), ("seek 2", 2), ("rate 1", 2),
    ]
    /// How long the group plays on once the late joiner has joined, then how long it rests paused.
    static let lateJoinHold = 5.0
    static let finalPause = 0.5
    /// Clock offsets (s) and drifts (ppm) that the peers take in turn; the late joiner takes the last.
    static let clockOffsets = [2.5, -4.0, 7.25, -1.5, 5.5, -6.75, 3.0, -2.0, -3.3]
    static let clockDrifts = [60.0, -120, 150, -40, 90, -150, 20, -75, 110]
    /// The most peers the benchmark runs (it runs on a small machine).
    public static let maximumPeers = 8

    /// A benchmark of `peers` peers running `executable`, on `clip` or on a clip it makes.
    public init(peers: Int = 4, clip: String? = nil, executable: String) {
        self.peers = peers
        self.clip = clip
        self.executable = executable
    }

    /// Runs the session and measures it; `progress` hears what is happening, a line at a time.
    public func run(progress: (String) -> Void = { _ in }) throws -> SyncBenchmarkReport {
        guard (2...SyncBenchmark.maximumPeers).contains(peers) else {
            throw BenchmarkError("the benchmark runs 2 to \(SyncBenchmark.maximumPeers) peers, not \(peers)")
        }
        let started = Date()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tandem-bench-sync-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let clipPath: String
        if let clip {
            clipPath = clip
        } else {
            clipPath = directory.appendingPathComponent("sync-clip.mp4").path
            progress("making a 20 s 640x360 clip with ffmpeg")
            try BenchmarkClip().make(at: clipPath)
        }
        var session = SyncSession(executable: executable, clip: clipPath, directory: directory.path)
        defer { session.killAll() }
        let outcome = try session.run(peers: peers, progress: progress)
        progress("reading the presentation logs")
        return try SyncBenchmark.report(outcome, peers: peers, clip: clipPath, seconds: Date().timeIntervalSince(started))
    }
}
