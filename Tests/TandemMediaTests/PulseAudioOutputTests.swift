import Foundation
import Synchronization
import Testing
@testable import TandemMedia
import TandemClock
import TandemHarness
import TandemPlayback
import TandemMediaTypes
import TandemTestKit

// test-tier: alone
/// The sound output for real: players into a PulseAudio server the test starts itself, recorded
/// from the null sink's monitor (one recording, one clock).
@Suite(.serialized) struct PulseAudioOutputProcessTests {
    /// 1 s of white noise, the same on both channels, as a WAV file: a sound whose onset and
    /// cross-correlation are sharp.
    static func noise(in directory: String, seed: Int = 7, name: String = "noise.wav") throws -> String {
        let path = directory + "/" + name
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        process.arguments = ["-v", "error", "-y", "-f", "lavfi", "-i", "anoisesrc=d=1:c=white:r=48000:a=0.5:s=\(seed)", "-ac", "2",
                             "-c:a", "pcm_s16le", path]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw FixtureError("ffmpeg could not make the noise") }
        return path
    }

    /// Waits (polling) until `condition` or `timeout` seconds; whether it came.
    static func wait(timeout: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return condition()
    }

    /// The lag of `b` behind `a` in samples, to a fraction (the cross-correlation's peak within
    /// ±`range`, interpolated by a parabola), over `count` samples from `start`.
    static func lag(_ a: [Float], _ b: [Float], start: Int, count: Int, range: Int) -> Double {
        func correlation(_ lag: Int) -> Double {
            var sum = 0.0
            for index in start..<(start + count) where index + lag >= 0 && index + lag < b.count && index < a.count {
                sum += Double(a[index]) * Double(b[index + lag])
            }
            return sum
        }
        let values = (-range...range).map(correlation)
        let best = values.indices.max { values[$0] < values[$1] }!
        guard best > 0, best < values.count - 1 else { return Double(best - range) }
        let (l, c, r) = (values[best - 1], values[best], values[best + 1])
        let denominator = l - 2 * c + r
        return Double(best - range) + (denominator == 0 ? 0 : 0.5 * (l - r) / denominator)
    }

    /// Two outputs render one sound by the instant each frame reaches the output; one of them
    /// stalls in its render for 150 ms, and its stream runs dry. Its sound comes back in place:
    /// 20 ms after the gap it is within 0.2 ms of the other's, not late by the gap.
    @Test func anUnderrunLeavesAGapAndTheSoundComesBackInPlace() throws {
        let server = try PulseAudioServer.start()
        defer { server.stop() }
        try Self.twoChannels(on: server)
        let recording = try server.record(source: "mix.monitor", channels: 2, channelMap: ["aux0", "aux1"],
                                          to: server.directory.path + "/monitor.raw")
        // The recording under way (the monitor's frames reaching the file) before anything plays.
        let size = { ((try? FileManager.default.attributesOfItem(atPath: recording.path))?[.size] as? Int) ?? 0 }
        try #require(Self.wait(timeout: 5) { size() >= 48_000 * 4 / 10 }, "the recording did not start")
        // Noise addressed by the frame of the machine's clock at which it is meant to play.
        var generator = SystemRandomNumberGenerator()
        let noise = (0..<48_000).map { _ in Float.random(in: -0.5...0.5, using: &generator) }
        let epoch = LocalInstant(nanoseconds: HostInstant.now().nanoseconds)
        let stallAfter = LocalInstant(nanoseconds: HostInstant.now().nanoseconds + 1_000_000_000)
        let stalled = Mutex(false)
        let underruns = Mutex(0)
        let outputs = try (0..<2).map { index in
            var settings = PulseAudioOutput.Settings()
            settings.server = server.serverString
            settings.device = "p\(index)"
            return try PulseAudioOutput(settings: settings, render: { frames, instant, period, _, samples in
                if index == 0, instant > stallAfter, stalled.withLock({ stalled in defer { stalled = true }; return !stalled }) {
                    Thread.sleep(forTimeInterval: 0.15)
                }
                let first = Int((Double((instant - epoch).nanoseconds) / period).rounded())
                for frame in 0..<frames {
                    let value = noise[((first + frame) % noise.count + noise.count) % noise.count]
                    samples[2 * frame] = value
                    samples[2 * frame + 1] = value
                }
                return frames
            }, events: { event in
                if index == 0, case .underrun = event { underruns.withLock { $0 += 1 } }
            })
        }
        Thread.sleep(forTimeInterval: 2.2)
        recording.stop()
        for output in outputs { output.close() }
        #expect(stalled.withLock { $0 })
        #expect(underruns.withLock { $0 } >= 1, "the stall did not run the stream dry")

        let data = try Data(contentsOf: URL(fileURLWithPath: recording.path))
        let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        let channels = (0..<2).map { channel in stride(from: channel, to: samples.count, by: 2).map { Float(samples[$0]) / 32768 } }
        // The gap: the longest run of silence in the first channel after its sound began.
        let onset = try #require(channels[0].firstIndex { abs($0) > 0.02 })
        var longest = (start: 0, length: 0), run = 0
        for index in onset..<channels[0].count {
            if channels[0][index] == 0 { run += 1 } else { run = 0 }
            if run > longest.length { longest = (index - run + 1, run) }
        }
        #expect(longest.length > 2_400, "no gap of silence in the stalled output's sound")
        let resumed = longest.start + longest.length
        try #require(resumed + 960 + 4_800 < channels[0].count)
        let lag = Self.lag(channels[1], channels[0], start: resumed + 960, count: 4_800, range: 48)
        // In place: within 0.2 ms (10 samples) of the other (2 to 3 samples seen here); late by
        // the gap it would be 7,200 samples off.
        #expect(abs(lag) < 10, "after the gap the stalled output is \(lag) samples off the other")
    }

    /// An output whose render leaves out what it may (all but the frames due before `holding`,
    /// and 96 more) for 300 ms, as a player whose decoding is catching up with a seek: the output
    /// asks again in time for the rest, so its sound plays with no gap and no underrun, in place
    /// with another output's that renders everything.
    @Test func aWriteHeldBackIsCompletedInTimeWithoutAGap() throws {
        let server = try PulseAudioServer.start()
        defer { server.stop() }
        try Self.twoChannels(on: server)
        let recording = try server.record(source: "mix.monitor", channels: 2, channelMap: ["aux0", "aux1"],
                                          to: server.directory.path + "/monitor.raw")
        let size = { ((try? FileManager.default.attributesOfItem(atPath: recording.path))?[.size] as? Int) ?? 0 }
        try #require(Self.wait(timeout: 5) { size() >= 48_000 * 4 / 10 }, "the recording did not start")
        var generator = SystemRandomNumberGenerator()
        let noise = (0..<48_000).map { _ in Float.random(in: -0.5...0.5, using: &generator) }
        let epoch = LocalInstant(nanoseconds: HostInstant.now().nanoseconds)
        let holdingFrom = epoch + .milliseconds(1_000), holdingUntil = epoch + .milliseconds(1_300)
        let shortWrites = Mutex(0)
        // Each output's underruns, as times since the epoch: the other output's say whether the
        // whole server or machine stalled, which a failure's message reports.
        let underruns = Mutex<[[TimeSpan]]>([[], []])
        let outputs = try (0..<2).map { index in
            var settings = PulseAudioOutput.Settings()
            settings.server = server.serverString
            settings.device = "p\(index)"
            return try PulseAudioOutput(settings: settings, render: { frames, instant, period, holding, samples in
                var count = frames
                if index == 0, instant >= holdingFrom, instant < holdingUntil {
                    let due = max(0, Int((Double((holding - instant).nanoseconds) / period).rounded(.up)))
                    count = min(frames, due + 96)
                    if count < frames { shortWrites.withLock { $0 += 1 } }
                }
                let first = Int((Double((instant - epoch).nanoseconds) / period).rounded())
                for frame in 0..<count {
                    let value = noise[((first + frame) % noise.count + noise.count) % noise.count]
                    samples[2 * frame] = value
                    samples[2 * frame + 1] = value
                }
                return count
            }, events: { event in
                if case .underrun(let at) = event { underruns.withLock { $0[index].append(at - epoch) } }
            })
        }
        Thread.sleep(forTimeInterval: 2)
        recording.stop()
        for output in outputs { output.close() }
        #expect(shortWrites.withLock { $0 } >= 5, "the output did not ask again after short writes")
        let dry = underruns.withLock { $0 }
        #expect(dry[0].isEmpty, "a held-back write ran the stream dry at \(dry[0]) (the other output: \(dry[1]))")

        let data = try Data(contentsOf: URL(fileURLWithPath: recording.path))
        let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        let channels = (0..<2).map { channel in stride(from: channel, to: samples.count, by: 2).map { Float(samples[$0]) / 32768 } }
        let onset = try #require(channels[0].firstIndex { abs($0) > 0.02 })
        try #require(onset + 72_000 < channels[0].count, "less than 1.5 s recorded")
        var longest = 0, run = 0, gapEnd = onset
        for index in onset..<(onset + 72_000) {
            run = channels[0][index] == 0 ? run + 1 : 0
            if run > longest { (longest, gapEnd) = (run, index) }
        }
        #expect(longest < 8, "a gap of \(longest) samples in the held-back output's sound, ending \(gapEnd - onset) after the onset")
        // In place throughout, the held-back stretch (about 0.9–1.3 s after the onset) included.
        for start in stride(from: onset + 4_800, to: onset + 67_200, by: 9_600) {
            let lag = Self.lag(channels[1], channels[0], start: start, count: 4_800, range: 48)
            #expect(abs(lag) < 10, "at \(start - onset) samples after the onset the output is \(lag) samples off the other")
        }
    }

    /// A stereo null sink `out` on `server`, its monitor recorded at 48 kHz into the server's
    /// directory (recording first: its short latency keeps the sink from rendering far ahead).
    ///
    /// The sink runs at 50 kHz, where its frames last exactly 20 µs of the machine's clock, so
    /// that a recorded frame's index is the machine's time since the onset. A null sink adds up
    /// the durations of the blocks it renders, each rounded down to the microsecond: at 48 kHz
    /// it renders more frames than 48,000 in a second, by as much more as its blocks are many
    /// and ragged, which the machine's load decides (a busy machine wakes it late, for blocks
    /// of odd sizes), and 600 ms after an onset a frame would lie samples beyond where the
    /// machine's time puts it, by the load rather than by the output.
    static func recordedStereoSink(on server: PulseAudioServer) throws -> PulseAudioRecording {
        try server.loadNullSink(name: "out", channels: 2, rate: 50_000, channelMap: ["front-left", "front-right"])
        return try server.record(source: "out.monitor", channels: 2, channelMap: ["front-left", "front-right"],
                                 to: server.directory.path + "/monitor.raw")
    }

    /// Player options that play the sound on `out` of `server`.
    static func soundOnOut(of server: PulseAudioServer) -> HeadlessPlayer.Options {
        var options = HeadlessPlayer.Options()
        options.audioOutput = .pulse
        options.audioServer = server.serverString
        options.audioDevice = "out"
        return options
    }

    /// Waits until `player`'s output knows its latency (the server's timing reports have come)
    /// and the player is ready, then lets the stream's first reports settle, as a player opened
    /// ahead of the play would.
    static func settle(_ player: HeadlessPlayer) {
        #expect(wait(timeout: 5) { player.soundStatistics.latency != nil && player.isReadyToPlay })
        Thread.sleep(forTimeInterval: 0.5)
    }

    /// A two-channel null sink `mix` and a mono remap sink onto each channel, `p0` and `p1`.
    static func twoChannels(on server: PulseAudioServer) throws {
        try server.loadNullSink(name: "mix", channels: 2, channelMap: ["aux0", "aux1"])
        for (index, channel) in ["aux0", "aux1"].enumerated() {
            try server.loadRemapSink(name: "p\(index)", master: "mix", channels: 1, channelMap: ["mono"], masterChannelMap: [channel])
        }
    }

    @Test func twoPlayersIntoOneSinkStartTogetherAtTheInstantAsked() throws {
        let server = try PulseAudioServer.start()
        defer { server.stop() }
        try Self.twoChannels(on: server)
        let directory = server.directory.path
        let media = try Self.noise(in: directory)
        // Recording first: its short latency keeps the null sink from rendering far ahead.
        let recording = try server.record(source: "mix.monitor", channels: 2, channelMap: ["aux0", "aux1"], to: directory + "/monitor.raw")
        let players = try (0..<2).map { index in
            var options = HeadlessPlayer.Options()
            options.audioOutput = .pulse
            options.audioServer = server.serverString
            options.audioDevice = "p\(index)"
            options.audioLog = directory + "/audio\(index).jsonl"
            options.audioNotice = { line in Issue.record("player \(index): \(line)") }
            return try HeadlessPlayer(url: media, options: options)
        }
        #expect(players.allSatisfy { $0.hasSoundOutput })
        // Both outputs know their latency (the server's timing reports have come).
        #expect(Self.wait(timeout: 5) { players.allSatisfy { $0.soundStatistics.latency != nil } })
        // As a player opened ahead of the play would: the stream's first reports are settled.
        Thread.sleep(forTimeInterval: 0.5)
        let start = HostInstant.now().nanoseconds + 300_000_000
        for player in players {
            try player.setTimeline(PresentationTimeline(rate: 1, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: start)))
        }
        Thread.sleep(forTimeInterval: 0.8)
        recording.stop()
        let statistics = players.map(\.soundStatistics)
        for player in players { player.close() }

        // The recording: aux0 is the first player's, aux1 the second's.
        let data = try Data(contentsOf: URL(fileURLWithPath: recording.path))
        let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        let channels = (0..<2).map { channel in stride(from: channel, to: samples.count, by: 2).map { Float(samples[$0]) / 32768 } }
        let onsets = channels.map { channel in channel.firstIndex { abs($0) > 0.02 } }
        let first = try #require(onsets[0]), second = try #require(onsets[1])
        #expect(abs(first - second) <= 5)
        let lag = Self.lag(channels[0], channels[1], start: first + 200, count: 9_600, range: 48)
        // Within 50 µs (2.4 samples) of each other, measured at the output.
        #expect(abs(lag) < 2.4, "the second player's sound lags the first's by \(lag) samples")
        for (index, statistics) in statistics.enumerated() {
            #expect(statistics.snaps == 0, "player \(index) snapped")
            #expect(statistics.writes > 0)
        }

        // Each log's first write: media 0 planned within 1 ms of the instant asked, by the output's own model.
        for index in 0..<2 {
            let lines = try String(contentsOfFile: directory + "/audio\(index).jsonl", encoding: .utf8).split(separator: "\n")
            let writes = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
                .filter { $0["kind"] as? String == "write" }
            let write = try #require(writes.first)
            // The first output frame at or after the instant plays the timeline's position there:
            // media within its first frame, read between frames rather than rounded onto one.
            let mediaFrame = try #require(write["media"] as? Double)
            #expect(mediaFrame >= 0 && mediaFrame < 1.001, "first media position \(mediaFrame)")
            let intended = try #require(write["intended"] as? Int64), expected = try #require(write["expected"] as? Int64)
            #expect(abs(Double(intended - start) - mediaFrame * 1e9 / 48_000) < 1_000)
            #expect(abs(expected - intended) < 1_000_000)
            #expect(lines.contains { $0.contains("\"kind\":\"latency\"") })
        }
    }

    @Test func pauseResumeAndSeekLandAtTheirInstants() throws {
        let server = try PulseAudioServer.start()
        defer { server.stop() }
        let recording = try Self.recordedStereoSink(on: server)
        let directory = server.directory.path
        let media = try Self.noise(in: directory)
        let source = try Self.samples(of: media, in: directory)
        let player = try HeadlessPlayer(url: media, options: Self.soundOnOut(of: server))
        defer { player.close() }
        Self.settle(player)
        // Plays from 0 at T; paused at T + 200 ms; plays on at T + 400 ms; at T + 600 ms jumps to media 0.1 s.
        let t = HostInstant.now().nanoseconds + 300_000_000
        let ms: Int64 = 1_000_000
        try player.setTimeline(PresentationTimeline(rate: 1, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: t)))
        try player.setTimeline(.paused(at: .init(nanoseconds: 200 * ms), from: .init(nanoseconds: t + 200 * ms)))
        try player.setTimeline(PresentationTimeline(rate: 1, anchorItemTime: .init(nanoseconds: 200 * ms), anchorHostTime: .init(nanoseconds: t + 400 * ms)))
        try player.setTimeline(PresentationTimeline(rate: 1, anchorItemTime: .init(nanoseconds: 100 * ms), anchorHostTime: .init(nanoseconds: t + 600 * ms)),
                               discontinuous: true)
        Thread.sleep(forTimeInterval: 1.1)
        recording.stop()
        #expect(player.soundStatistics.snaps == 0)

        let data = try Data(contentsOf: URL(fileURLWithPath: recording.path))
        let recorded = data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        let left = stride(from: 0, to: recorded.count, by: 2).map { Float(recorded[$0]) / 32768 }
        // The first sound, faded in from its first frame (1/97 of the noise): output frame `onset` is T.
        let onset = try #require(left.firstIndex { $0 != 0 })
        #expect(left[onset..<(onset + 5)].allSatisfy { abs($0) < 0.05 })
        // Silence from the pause's fade to the resume, 200 ms later.
        #expect(left[(onset + 9_600 - 200)..<(onset + 9_600)].contains { abs($0) > 0.02 })
        #expect(left[(onset + 9_600 + 100)..<(onset + 19_200 - 2)].allSatisfy { $0 == 0 })
        #expect(left[(onset + 19_200)..<(onset + 19_200 + 200)].contains { $0 != 0 })
        // After the resume, media 0.2 s on; after the seek, media 0.1 s on: each within 50 µs of
        // where the play's own sound lies (the first sample that is not zero, faded in, places
        // the play only to a few samples).
        let played = Self.lag(source, left, from: 200, to: onset + 200, count: 4_000, range: 48)
        let resumed = Self.lag(source, left, from: 9_600 + 200, to: onset + 19_200 + 200, count: 4_000, range: 48)
        let sought = Self.lag(source, left, from: 4_800 + 200, to: onset + 28_800 + 200, count: 4_000, range: 48)
        let statistics = player.soundStatistics
        #expect(abs(played) < 8, "the play's sound lies \(played) samples from its first sample; \(statistics)")
        #expect(abs(resumed - played) < 2.4, "the resume lands \(resumed - played) samples off; \(statistics)")
        #expect(abs(sought - played) < 2.4, "the seek lands \(sought - played) samples off; \(statistics)")
    }

    @Test func soundAndPicturesFollowOneTimelineAndTheLatencyOffsetMovesBoth() throws {
        let server = try PulseAudioServer.start()
        defer { server.stop() }
        let recording = try Self.recordedStereoSink(on: server)
        defer { recording.stop() }
        let directory = server.directory.path
        let frames = try PresentationLog(path: directory + "/frames.jsonl")
        var options = Self.soundOnOut(of: server)
        options.audioLog = directory + "/audio.jsonl"
        // Everything 30 ms earlier than the timeline gives it, for an output that lags.
        options.latencyOffset = 30_000_000
        let player = try HeadlessPlayer(url: SampleClip.h264.path, options: options, videoSinks: [frames])
        Self.settle(player)
        let start = HostInstant.now().nanoseconds + 300_000_000
        let timeline = PresentationTimeline(rate: 1, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: start))
        try player.setTimeline(timeline)
        Thread.sleep(forTimeInterval: 1.3)
        player.close()
        frames.close()

        // The pictures: each presented 30 ms before the timeline's instant for it.
        let presented = try PresentationRecord.read(path: frames.path).filter { $0.still != true }
        #expect(presented.count >= 20)
        for frame in presented {
            let due = timeline.localTime(forMediaTime: MediaTime.nanoseconds(seconds: frame.pts))! - 30_000_000
            #expect(abs(frame.scheduledNanoseconds - max(due, start - 30_000_000)) < 1_000)
        }
        // Presented at those instants: nearly all within 2 ms (a busy machine delays the odd one).
        let late = presented.map { $0.presentedNanoseconds - $0.scheduledNanoseconds }
        #expect(Double(late.filter { $0 < 2_000_000 }.count) >= 0.95 * Double(late.count), "lateness (ns): \(late.sorted().suffix(5))")
        #expect(late.allSatisfy { $0 < 20_000_000 }, "lateness (ns): \(late.sorted().suffix(5))")
        // The sound: each write's first media frame meant for 30 ms before the timeline's instant,
        // and expected at the output within a frame of it (the output's latency included).
        let lines = try String(contentsOfFile: directory + "/audio.jsonl", encoding: .utf8).split(separator: "\n")
        let writes = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .filter { $0["kind"] as? String == "write" }
        #expect(writes.count >= 40)
        var offs: [Int64] = []
        for write in writes {
            let media = try #require(write["media"] as? Double)
            let intended = try #require(write["intended"] as? Int64), expected = try #require(write["expected"] as? Int64)
            let due = Double(start) + media * 1e9 / 48_000 - 30_000_000
            #expect(abs(Double(intended) - due) < 1_000)
            offs.append(abs(expected - intended))
        }
        // On their instants: nearly all within a sample (the output's timing fit moves a little
        // with each report of the server's), and none by more than five.
        let within = offs.filter { $0 < 25_000 }.count
        #expect(Double(within) >= 0.95 * Double(offs.count), "writes off their instants (ns): \(offs.sorted().suffix(10))")
        #expect(offs.allSatisfy { $0 < 104_000 }, "writes off their instants (ns): \(offs.sorted().suffix(10))")
        #expect(player.soundStatistics.snaps == 0)
    }

    @Test func theNextItemsSoundStartsAtTheSwitchsInstant() throws {
        let server = try PulseAudioServer.start()
        defer { server.stop() }
        let recording = try Self.recordedStereoSink(on: server)
        let directory = server.directory.path
        let first = try Self.noise(in: directory)
        let second = try Self.noise(in: directory, seed: 11, name: "next.wav")
        let next = try Self.samples(of: second, in: directory)
        let player = try HeadlessPlayer(url: first, options: Self.soundOnOut(of: server))
        defer { player.close() }
        Self.settle(player)
        // The first item from T; at T + 300 ms the next one from its start, decoded ahead.
        let t = HostInstant.now().nanoseconds + 300_000_000
        try player.setTimeline(PresentationTimeline(rate: 1, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: t)))
        try player.prepare(PlaybackItem(file: second, identifier: "next.wav"), at: 0)
        #expect(player.waitUntilReady(preparedItem: true, timeout: 5))
        try player.switchToPreparedItem(timeline: PresentationTimeline(rate: 1, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: t + 300_000_000)))
        Thread.sleep(forTimeInterval: 0.9)
        recording.stop()
        #expect(player.itemIdentifier == "next.wav")

        let data = try Data(contentsOf: URL(fileURLWithPath: recording.path))
        let recorded = data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        let left = stride(from: 0, to: recorded.count, by: 2).map { Float(recorded[$0]) / 32768 }
        let onset = try #require(left.firstIndex { $0 != 0 })
        // From output frame onset + 14 400 (T + 300 ms): the next item's sound from its start, with no gap.
        let switched = Self.lag(next, left, from: 200, to: onset + 14_400 + 200, count: 4_000, range: 48)
        #expect(abs(switched) < 2.4, "the next item starts \(switched) samples off")
        #expect(left[(onset + 14_400 - 400)..<(onset + 14_400 + 400)].filter { $0 == 0 }.count < 10)
    }

    /// The left channel of `media`, decoded by FFmpeg, as Float.
    static func samples(of media: String, in directory: String) throws -> [Float] {
        let path = directory + "/" + URL(fileURLWithPath: media).lastPathComponent + ".raw"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        process.arguments = ["-v", "error", "-y", "-i", media, "-f", "s16le", "-ac", "2", "-ar", "48000", path]
        try process.run()
        process.waitUntilExit()
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        return stride(from: 0, to: samples.count, by: 2).map { Float(samples[$0]) / 32768 }
    }

    /// The lag of `b`'s frames from `to` behind `a`'s from `from`, to a fraction of a sample.
    static func lag(_ a: [Float], _ b: [Float], from: Int, to: Int, count: Int, range: Int) -> Double {
        let shifted = Array(repeating: Float(0), count: max(0, to - from)) + a
        return lag(shifted, b, start: to, count: count, range: range)
    }

    @Test func withoutAServerThePlayerSaysSoOnceAndPlaysOnSilently() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tandem-nosound-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let media = try Self.noise(in: directory)
        let notices = Mutex<[String]>([])
        var options = HeadlessPlayer.Options()
        options.audioOutput = .pulse
        options.audioServer = "unix:/nonexistent/native"
        options.audioNotice = { line in notices.withLock { $0.append(line) } }
        let opened = HostInstant.now().nanoseconds
        let sink = NullAudioSink()
        let player = try HeadlessPlayer(url: media, options: options, audioSinks: [sink],
                                        timeline: PresentationTimeline(rate: 1, anchorItemTime: .zero, anchorHostTime: .init(nanoseconds: HostInstant.now().nanoseconds + 50_000_000)))
        defer { player.close() }
        #expect(HostInstant.now().nanoseconds - opened < 3_000_000_000)
        let lines = notices.withLock { $0 }
        #expect(lines.count == 1)
        #expect(lines.first?.contains("no sound server (PulseAudio/PipeWire) reachable") == true)
        #expect(lines.first?.hasSuffix("playing without sound") == true)
        #expect(!player.hasSoundOutput)
        player.volume = 40
        player.isMuted = true
        #expect(player.volume == 40 && player.isMuted)
        // It plays to the end, silently.
        #expect(player.waitUntilEnded(timeout: 5))
        #expect(sink.consumedFrames > 40_000)
    }
}
