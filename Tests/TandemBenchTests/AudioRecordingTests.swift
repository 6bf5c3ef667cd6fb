import Foundation
import Testing
@testable import TandemBench
import TandemHarness

/// The audio bench's arrangement, for real: `pulseaudio` started by the test, a 3-channel null
/// sink, a mono remap sink per player onto its own channel, a player into two of them, and the
/// monitor recorded by `parec` and read back by the bench's watch of its file: each player's
/// sound is on its own channel, bit for bit, and the third channel is silent.
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
        let recording = try server.record(source: "mix.monitor", channels: 3, channelMap: map, to: directory + "/recording.raw")
        let watch = AudioRecordingWatch(path: directory + "/recording.raw", channels: 3)
        #expect(watch.waitUntilFlowing(frames: 960, timeout: 10))
        for index in 0..<2 {
            try server.play(raw: directory + "/source-\(index).raw", channels: 1, into: "p\(index)")
        }
        Thread.sleep(forTimeInterval: 0.2)
        recording.stop()
        watch.stop()
        #expect(watch.clock() != nil)

        let channels = try watch.channelSamples()
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
}
