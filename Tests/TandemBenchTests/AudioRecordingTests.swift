import Foundation
import Testing
@testable import TandemBench
import TandemHarness

/// The audio bench's arrangement, for real: `pulseaudio` started by the test, a 3-channel null
/// sink, a mono remap sink per player onto its own channel, a player into two of them, and the
/// monitor recorded by the bench's recorder (`AudioMonitorRecorder`): each player's sound is on
/// its own channel, bit for bit, and the third channel is silent; and at the bench's 50 kHz the
/// server's timing of the recording keeps the machine's time.
@Suite(.serialized) struct AudioRecordingProcessTests {
    @Test func eachPlayerLandsOnItsOwnChannel() throws {
        let server = try PulseAudioServer.start()
        defer { server.stop() }
        let map = ["aux0", "aux1", "aux2"]
        _ = try server.loadNullSink(name: "mix", channels: 3, rate: 48_000, channelMap: map)
        for channel in 0..<3 {
            _ = try server.loadRemapSink(name: "p\(channel)", master: "mix", channels: 1, channelMap: ["mono"], masterChannelMap: [map[channel]])
        }
        let sinks = try server.pactl(["list", "short", "sinks"])
        #expect(sinks.contains("p0") && sinks.contains("p2"))

        let directory = server.directory.path
        let sources = [AudioBenchSignal(seconds: 1, seed: 5).samples(), AudioBenchSignal(seconds: 1, seed: 6).samples()]
        for (index, samples) in sources.enumerated() {
            var bytes = [UInt8]()
            for sample in samples {
                let value = Int16(clamping: Int((sample * 32767).rounded()))
                bytes += [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)]
            }
            try Data(bytes).write(to: URL(fileURLWithPath: directory + "/source-\(index).raw"))
        }
        let recording = try AudioMonitorRecorder(server: server.serverString, source: "mix.monitor", channels: 3, channelMap: map,
                                                 path: directory + "/recording.raw")
        #expect(recording.waitUntilFlowing(frames: 960, timeout: 10))
        for index in 0..<2 {
            try server.play(raw: directory + "/source-\(index).raw", channels: 1, into: "p\(index)")
        }
        Thread.sleep(forTimeInterval: 0.2)
        recording.stop()
        #expect(recording.clock() != nil)

        let channels = try recording.channelSamples()
        #expect(channels.count == 3)
        for (index, source) in sources.enumerated() {
            // Where the sound begins on its channel gives where to look for a stretch of its middle.
            let channel = channels[index]
            guard let begins = channel.firstIndex(where: { abs($0) > 0.01 }), let sourceBegins = source.firstIndex(where: { abs($0) > 0.01 }) else {
                Issue.record("channel \(index) is silent")
                continue
            }
            let window = Array(source[24_000..<(24_000 + 1_440)])
            let found = AudioCorrelation.locate(window, start: 0, length: window.count, in: channel, center: begins - sourceBegins + 24_000, radius: 480)
            #expect((found?.peak ?? 0) > 0.999, "player \(index)'s sound on channel \(index): peak \(found?.peak ?? 0)")
            // Not necessarily where its onset says: a stream that starts on a running sink rewinds it, and the
            // monitor keeps what was rendered before the rewind.
            // And not on the other player's channel.
            let other = channels[1 - index]
            let otherBegins = other.firstIndex { abs($0) > 0.01 } ?? 0
            #expect(AudioCorrelation.locate(window, start: 0, length: window.count, in: other, center: otherBegins - sourceBegins + 24_000,
                                            radius: 480, minimumPeak: 0.5) == nil)
        }
        #expect(channels[2].allSatisfy { $0 == 0 })
    }

    /// The bench's sink: a null sink at 50 kHz, whose frames last 20 µs exactly, keeps the
    /// machine's time; the server's timing reports of its monitor lie on one line at that rate
    /// (many of them exactly, the others late by a block or two).
    @Test func theServersTimingOfTheRecordingKeepsTheMachinesTime() throws {
        let server = try PulseAudioServer.start()
        defer { server.stop() }
        _ = try server.loadNullSink(name: "mix", channels: 2, rate: 50_000, channelMap: ["aux0", "aux1"])
        _ = try server.loadRemapSink(name: "p0", master: "mix", channels: 1, channelMap: ["mono"], masterChannelMap: ["aux0"])
        let directory = server.directory.path
        var bytes = [UInt8]()
        for sample in AudioBenchSignal(seconds: 1.5, seed: 5).samples() {
            let value = Int16(clamping: Int((sample * 32767).rounded()))
            bytes += [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)]
        }
        try Data(bytes).write(to: URL(fileURLWithPath: directory + "/source.raw"))
        let recording = try AudioMonitorRecorder(server: server.serverString, source: "mix.monitor", channels: 2, channelMap: ["aux0", "aux1"],
                                                 path: directory + "/recording.raw")
        #expect(recording.waitUntilFlowing(frames: 960, timeout: 10))
        try server.play(raw: directory + "/source.raw", channels: 1, into: "p0")
        recording.stop()

        let timing = recording.timing
        #expect(timing.count >= 20, "\(timing.count) timing reports")
        // Fitted freely over a second and a half: 48,000 frames a second (not the sink's 50,000,
        // nor bytes taken for frames), to the precision a few dozen reports give.
        let free = try #require(recording.clock())
        #expect(abs(free.ppm(nominalPeriod: 1e9 / 48_000)) < 300, "the reports ran \(free.ppm(nominalPeriod: 1e9 / 48_000)) ppm")
        // At the sink's exact rate, a part of the reports lie on one line (the others a block
        // or two late, taken while a block was on its way to the queue), none far from it.
        let clock = try #require(recording.clock(period: 1e9 / 48_000))
        let residuals = timing.map { Double($0.instant - clock.instant(ofFrame: Double($0.frame))) }
        let onTheLine = residuals.filter { abs($0) <= 50_000 }.count
        #expect(onTheLine * 10 >= residuals.count, "\(onTheLine) of \(residuals.count) reports within 50 µs of the line")
        #expect(residuals.filter { abs($0) > 20_000_000 }.isEmpty, "reports more than 20 ms off the line: \(residuals.filter { abs($0) > 20_000_000 })")
        #expect(try recording.channelSamples()[0].contains { abs($0) > 0.1 })
    }
}
