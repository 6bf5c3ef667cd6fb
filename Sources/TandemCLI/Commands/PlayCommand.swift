import Foundation
import TandemBench
import TandemMedia
import TandemClock
import TandemMediaTypes

/// `tandem play FILE ...`: play alone with the headless player.
enum PlayCommand: Command {
    static let words = ["play"]
    static let usage = "play FILE [FILE...] [--wall] [--start SECONDS] [--rate R] [--duration SECONDS] [--video none|terminal] [--presentation-log PATH] [--snapshot SECONDS:PATH] [--threads N] [--log FILE] " + AudioOptions.usage
    static let summary = "play a file alone with the headless FFmpeg player and report what it presented"

    static func run(_ arguments: [String]) async throws -> Int32 {
        let arguments = try Arguments(
            arguments,
            options: Set(["start", "rate", "duration", "video", "presentation-log", "snapshot", "threads", LogOption.name])
                .union(AudioOptions.valueOptions),
            flags: ["wall"]
        )
        if arguments.flags.contains("wall") { return try await PlayWall.run(arguments) }
        try LogOption.sendFFmpegMessages(to: arguments.value(LogOption.name))
        let audio = try AudioOptions(arguments, builtinPlayer: true)
        try arguments.expectPositionals(atMost: 1)
        let path = try arguments.positional(0, "FILE")
        let (start, rate, duration, threads, video) = try playing(arguments)
        let snapshots = try (arguments.values["snapshot"] ?? []).map(parseSnapshot)

        do {
            for (time, target) in snapshots {
                let shown = try SnapshotWriter.write(url: path, at: MediaTime.nanoseconds(seconds: time), to: target)
                print(String(format: "snapshot at %.3f s: frame %.3f s written to ", time, MediaTime.seconds(shown)) + target)
            }
            return try play(path: path, start: start, rate: rate, duration: duration, threads: threads,
                            terminal: video == "terminal", logPath: arguments.value("presentation-log"), audio: audio)
        } catch let error as MediaError {
            throw CLIError.failure(error.description)
        }
    }

    /// The options of a play, one file or a wall: where it starts, its rate, how long it lasts,
    /// decoding threads and where the pictures go (the terminal when it is one).
    static func playing(_ arguments: Arguments) throws -> (start: Double, rate: Double, duration: Double?, threads: Int, video: String) {
        let start = try arguments.double("start", default: 0)!
        let rate = try arguments.double("rate", default: 1)!
        let duration = try arguments.double("duration")
        let threads = try arguments.int("threads", default: 0)!
        let video = arguments.value("video") ?? (isatty(1) != 0 ? "terminal" : "none")
        guard ["none", "terminal"].contains(video) else { throw CLIError.usage("--video is none or terminal, not '\(video)'") }
        guard rate >= PresentationTimeline.minimumRate && rate <= PresentationTimeline.maximumRate else {
            throw CLIError.usage("--rate must be between 0.25 and 4")
        }
        if let duration, duration <= 0 { throw CLIError.usage("--duration must be above 0") }
        guard start >= 0 else { throw CLIError.usage("--start must be 0 or more") }
        return (start, rate, duration, threads, video)
    }

    private static func parseSnapshot(_ text: String) throws(CLIError) -> (Double, String) {
        guard let colon = text.firstIndex(of: ":"), let time = Double(text[..<colon]), time >= 0,
              text.index(after: colon) < text.endIndex else {
            throw CLIError.usage("--snapshot wants SECONDS:PATH, for example 1.5:frame.png")
        }
        return (time, String(text[text.index(after: colon)...]))
    }

    private static func play(path: String, start: Double, rate: Double, duration: Double?, threads: Int,
                             terminal: Bool, logPath: String?, audio sound: AudioOptions) throws -> Int32 {
        let counter = CountingSink()
        let lateness = LatenessRecorder()
        let audio = NullAudioSink()
        var sinks: [any VideoSink] = [counter, lateness]
        let log = try logPath.map { path throws(MediaError) in try PresentationLog(path: path) }
        if let log { sinks.append(log) }
        let renderer = terminal ? TerminalRenderer() : nil
        if let renderer { sinks.append(renderer) }

        var options = HeadlessPlayer.Options()
        options.threads = threads
        sound.apply(to: &options)
        // Start a moment ahead so that the first frames are decoded before they are due.
        let begin = HostInstant.now() + .milliseconds(100)
        let timeline = PresentationTimeline(rate: rate, anchorItemTime: .zero + .seconds(start), anchorHostTime: begin)
        let player = try HeadlessPlayer(url: path, options: options, videoSinks: sinks, audioSinks: [audio], timeline: timeline)
        let deadline = duration.map { begin + .seconds($0) }
        while !player.hasEnded {
            let now = HostInstant.now()
            if let deadline, now >= deadline { break }
            let slice = min(0.25, deadline.map { ($0 - now).seconds } ?? 0.25)
            player.waitUntilEnded(timeout: slice)
            if let renderer {
                let position = (player.itemTime() - .zero).seconds
                renderer.statusLine = player.itemIdentifier + String(format: "  %.2f s  rate %.2f  frames %d", position, rate, counter.counts.frames)
            }
        }
        let statistics = player.statistics
        player.close()
        renderer?.stop()
        log?.close()
        printSummary(player: player, statistics: statistics, counts: counter.counts, audio: audio, lateness: lateness.samples)
        return statistics.decodingError == nil ? 0 : 2
    }

    private static func printSummary(player: HeadlessPlayer, statistics: PlaybackStatistics, counts: CountingSink.Counts,
                                     audio: NullAudioSink, lateness: [Int64]) {
        print("played \(player.itemIdentifier)")
        var frames = "  video: \(statistics.presentedFrames) frames presented, \(statistics.stillFrames) stills, "
            + "\(statistics.droppedLateFrames) dropped late"
        if let last = counts.lastPresentationTime { frames += String(format: ", last at %.3f s", MediaTime.seconds(last)) }
        print(frames)
        if let stats = Percentiles(lateness.map { Double($0) / 1e6 }) {
            print(String(format: "  lateness against the schedule: p50 %.3f ms, p99 %.3f ms, max %.3f ms", stats.p50, stats.p99, stats.max))
        }
        let seconds = Double(audio.consumedFrames) / Double(AudioChunk.sampleRate)
        print(String(format: "  audio: %d chunks, %.3f s consumed, %d dropped late", audio.consumedChunks, seconds, statistics.droppedAudioChunks))
        if statistics.corruptPackets > 0 { print("  corrupt packets skipped: \(statistics.corruptPackets)") }
        if let error = statistics.decodingError { print("  decoding stopped early: \(error)") }
    }
}
