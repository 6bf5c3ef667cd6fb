import Foundation
import Testing
import TandemHarness

/// The PulseAudio server that the sound tests and `tandem bench audio` start for themselves: a
/// null sink with a channel per participant, a remap sink putting one participant's sound on its
/// channel alone, and a recording of the monitor that keeps the channels apart.
@Suite(.serialized) struct PulseAudioServerProcessTests {
    @Test func remapSinkPutsItsSoundOnItsOwnChannelOfTheRecording() throws {
        let server = try PulseAudioServer.start()
        defer { server.stop() }
        try server.loadNullSink(name: "mix", channels: 2, channelMap: ["aux0", "aux1"])
        try server.loadRemapSink(name: "p1", master: "mix", channels: 1, channelMap: ["mono"], masterChannelMap: ["aux1"])
        let sinks = try server.pactl(["list", "short", "sinks"])
        #expect(sinks.contains("mix") && sinks.contains("p1"))

        let directory = server.directory.path
        // 0.3 s of a 1 kHz tone at amplitude 8,000, mono.
        let tone = (0..<14_400).map { Int16(8_000 * sin(2 * Double.pi * 1_000 * Double($0) / 48_000)) }
        let tonePath = directory + "/tone.raw"
        try tone.withUnsafeBytes { Data($0) }.write(to: URL(fileURLWithPath: tonePath))
        let recording = try server.record(source: "mix.monitor", channels: 2, channelMap: ["aux0", "aux1"], to: directory + "/monitor.raw")
        try server.play(raw: tonePath, channels: 1, into: "p1")
        let bytes = recording.stop()

        let data = try Data(contentsOf: URL(fileURLWithPath: recording.path))
        #expect(bytes == data.count)
        let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        let frames = samples.count / 2
        #expect(frames >= 14_400)
        let peaks = (0..<2).map { channel in (0..<frames).map { abs(Int(samples[2 * $0 + channel])) }.max() ?? 0 }
        // The other channel is silent; this one carries the tone unmixed, at its own level.
        #expect(peaks[0] == 0)
        #expect(abs(peaks[1] - 8_000) <= 2)
    }

    @Test func stopRemovesTheServerAndItsDirectory() throws {
        let server = try PulseAudioServer.start()
        let directory = server.directory.path
        #expect(FileManager.default.fileExists(atPath: server.socketPath))
        server.stop()
        #expect(!FileManager.default.fileExists(atPath: directory))
        #expect(throws: FixtureError.self) { try server.pactl(["info"]) }
    }
    @Test func mainThreadRealtimeWhereThisProcessMayGiveIt() throws {
        let server = try PulseAudioServer.start()
        defer { server.stop() }
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(__RLIMIT_RTPRIO.rawValue), &limit)
        let expected = SoundServerPriority.mainThread(effectiveUser: geteuid(), realtimeLimit: limit.rlim_cur) != nil
        #expect(server.realtime == expected)
        // A client still plays through it.
        try server.loadNullSink(name: "mix", channels: 1, channelMap: ["mono"])
        #expect(try server.pactl(["list", "short", "sinks"]).contains("mix"))
    }
}
